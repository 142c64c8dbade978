// THE list of coex settings: one line each. Everything else is generated from it: the fields of
// coex::config::Settings, the JSON key (the name), the environment variable (COEX_ + the name in
// capitals), the validation and its error lines, and docs/settings.md.
//
// COEX_SETTING(kind, name, default, (rule arguments), "doc")
//   kind: Bool, Int (min, max), Double (min, max[, min exclusive]), Enum ("words"), Path (),
//         Grammar (accepted phrase, check function), DoubleList (element min, element max);
//         see config/setting_rules.h. The rule arguments construct <kind>Rule.
// COEX_POLICY_PARAM(...), same arguments: a setting that is also a parameter of the scheduling
//   policies. These make config::PolicyParams (config/policy_params.h), the struct src/sched reads,
//   the names a simulator scenario sets under "params", and the table of docs/schedulers.md,
//   "Parameters". They take the defaults the papers use. An expansion that does not define
//   COEX_POLICY_PARAM treats them as plain settings.
//
// No include guard: this file is included once per expansion of COEX_SETTING.

#ifndef COEX_POLICY_PARAM
#define COEX_POLICY_PARAM(kind, name, initial, rule_args, doc) COEX_SETTING(kind, name, initial, rule_args, doc)
#define COEX_POLICY_PARAM_AS_SETTING
#endif

// --- What coex does ---
COEX_SETTING(Enum, policy, "auto", ("static boyer plbhec jitp wp ess hguided adaptive sigmoid predict auto"),
             "The scheduling policy that divides each split launch among the devices (docs/schedulers.md).")
COEX_SETTING(Grammar, devices, "all", (kDeviceSelectorGrammar, &check_device_selector),
             "The devices coex splits launches across. A device is used when it matches at least one term "
             "without `!` (or every term has `!`) and no term with `!`. `<index>` is the index `coex devices` "
             "prints; `<text>` matches part of the platform or device name, ignoring case. "
             "Example: `type:gpu,!name:Quadro`.")
COEX_SETTING(Bool, disable, false, (),
             "Pure pass-through: every OpenCL call goes straight to the driver and coex records nothing.")
COEX_SETTING(Int, min_split_work_items, 4096, (0, kNoIntLimit),
             "Launches with fewer work-items than this are not split (the report counts them under `not_split`): "
             "below it, moving data costs more than a second device saves. On a GPU as the app's device, this many "
             "for each CPU core the GPU counts for (compute units x 8): 4.3 million on an H100.")
COEX_SETTING(Double, min_split_seconds, 0.01, (0.0, kNoLimit),
             "A launch with fewer work-items than `min_split_work_items` is split all the same once an unsplit "
             "launch of its kernel and size was measured to take at least this many seconds on the app's device "
             "(work-items that each do much work). The first launch of a kernel and size runs unsplit and is "
             "timed.")
COEX_SETTING(Int, split_check_pieces, 64, (1, 4096),
             "How finely a launch is checked for chunks that depend on each other before it is split: its "
             "footprints are evaluated for this many runs of its work-groups (each group alone when it has no "
             "more), and a launch where one run reads or writes what another writes is not split "
             "(`cross_chunk_dependency`, `overlapping_writes`). The chunks that really ran are checked again "
             "after a split, which finds what a run of several groups hides; the launch then runs again on the "
             "app's device. `1`: only that check after the split.")
COEX_SETTING(Bool, lazy_home, true, (),
             "What the other devices wrote in a split launch stays with coex until the app needs it on its own "
             "device: a read, map or copy of the buffer, or a kernel coex does not split, brings it there first "
             "(an iterative kernel then moves only the bytes its neighbours need). `false`: written to the app's "
             "buffer at the end of every split launch. Buffers made with CL_MEM_USE_HOST_PTR are always written "
             "at the end.")
COEX_SETTING(Bool, resident_results, true, (),
             "With `lazy_home`: what a device other than the app's wrote in a split launch stays on that device "
             "until something needs it elsewhere (another device's chunk, a halo, or the app), and only those "
             "bytes are read from it; an iterative stencil then moves halos, not bands. `false`: read back into "
             "coex's host copy at the end of every split launch.")
COEX_SETTING(Bool, side_reads, true, (),
             "The inputs another device lacks that no part of the launch writes are read from the app's device "
             "while it computes its own part, through a second queue there. `false`: they are read before any "
             "device starts, or after the app's device finishes its running part.")

COEX_SETTING(Bool, serial_compiles, false, (),
             "On a PoCL platform, the first run of each kernel on each device (PoCL compiles it then) goes one "
             "device at a time, like coex's builds of the program: each device's first chunk waits until the "
             "others' have ended. `false`: the first runs go at once, each device in its own PoCL context. A "
             "safety valve for a PoCL whose compiler is not safe to use from several contexts at once; it costs "
             "sets of many devices their first split launches (docs/testbed.md).")

COEX_SETTING(Int, spin_microseconds, 500, (0, 100000),
             "How long a thread of coex's that waits for a split launch's next step (a device's part to run, "
             "the other devices' ends) polls for it before it blocks, where every thread that runs kernels "
             "(one per device, and a threaded CPU device's own) has a core and one is left: a blocked thread "
             "is woken tens of microseconds late on some machines, several times in each split launch. 0: "
             "never (docs/design.md, \"Spin waits\").")
COEX_SETTING(Bool, share_device_binaries, true, (),
             "coex builds the app's program (or its rewrite) from source on one device of a kind (one platform, "
             "device name and driver version) and the other devices of that kind from its binary. PoCL "
             "preprocesses the source with its OpenCL header at every build, about 30 to 60 ms a device even "
             "with its kernel cache warm, and the builds take turns; from a binary a build takes about 1 ms. "
             "`false`: every device builds from source.")
COEX_SETTING(Bool, share_first_runs, true, (),
             "On PoCL, a device's first run of a kernel at a local size and a zero or other global offset "
             "compiles its work-group function, and while PoCL compiles no kernel of the process runs on any PoCL "
             "device. Devices built from one binary compile the same function, each under a build hash of its "
             "own: the first to need it compiles it, and the others wait for it and copy the compiled files into "
             "their folders of PoCL's kernel cache (POCL_CACHE_DIR, else ~/.cache/pocl/kcache), where PoCL finds "
             "them. `false`: each device compiles its own.")
COEX_SETTING(Bool, compile_ahead, true, (),
             "On PoCL, under auto: where PoCL's kernel cache lacks what the first split of a program would compile "
             "(the generic work-group functions a read of the app's program binary compiles, and the kernel at a "
             "nonzero offset), a process of coex's own (`coex compile-ahead`) compiles them into that cache while "
             "the program's launches run on the app's device, whole; the program is split once it has ended. In the "
             "app's process those compiles stop every PoCL device of the process while they run (0.1 to 0.6 s a "
             "kernel). A run that ends first does not wait for it. `false`: compiled in the app's process, at the "
             "first launch that may be split.")
COEX_SETTING(Enum, compile_ahead_start, "auto", ("auto context build launch"),
             "When the `compile_ahead` process starts. `build`: at the app's clBuildProgram of the program, where "
             "PoCL's kernel cache lacks a kernel's generic work-group function: it sets PoCL up, builds the program "
             "and compiles those functions, then waits for the variants the first split's chunks run, which the "
             "first launch that may be split names. Beside devices of other kinds on PoCL's CPU drivers (a mixed "
             "set), it starts at the build where no binary of theirs was kept, and builds for the first device of "
             "each kind too, whose build waits for it; the launches run on the app's device until it ends. "
             "`launch`: at that launch, which then waits for all of it (and no process serves other kinds). "
             "`context`: as `build`, and where every device is of the app's device's kind one is spawned at the "
             "app's clCreateContext, which sets PoCL up while the app builds and takes the first such program's "
             "build (where none comes within 4.5 s it ends on its own, or at the exit). "
             "`auto`: `context` where the machine has a core that none of the PoCL CPU devices in use runs on, else "
             "`launch` once the kernel's launches so far, each as long as this one, would have saved by their "
             "splits what the first split compiles (`first_split_compile_seconds`): on the devices' cores the "
             "process slows the launches meanwhile, and a program of short or shrinking launches never wins that "
             "back.")
COEX_SETTING(Int, compile_ahead_processes, 0, (0, 64),
             "At most this many `coex compile-ahead` processes at once (`compile_ahead`); a program whose first "
             "split would start one beyond compiles in the app's process, as with `compile_ahead` false. Each is "
             "a compiler of its own on a core of its own, with a hundred megabytes or more of memory. `0`: the "
             "machine's cores less its PoCL CPU devices in use, at least 1 and at most 4.")
COEX_SETTING(Enum, compile_ahead_rewrite, "auto", ("auto true false"),
             "With `compile_ahead`, where its process starts at the app's clBuildProgram (`compile_ahead_start`): "
             "a program the analysis rewrites (every split runs coex's rewrite of it, which the devices build "
             "from source) gets a process of its own for the rewrite, in place of the app's program's: it builds "
             "the rewrite for the app's device and for each PoCL CPU device of this machine that builds it from "
             "source in the app (the first of each other kind, where no binary of it was kept), compiles its "
             "generic work-group functions and the variants the first launch that may be split names, while the "
             "launches run on the app's device; coex's builds of the rewrite there wait for it and find it all in "
             "PoCL's kernel cache. `false`: that process is "
             "ended as the analysis ends, and the rewrite is built and its first runs compiled in the app's "
             "process, while the first splits run. `auto`: `true` where a PoCL CPU device of another kind than "
             "the app's device takes part (a mixed set: there the first splits paid the rewrite's compiles in "
             "the app's process, one kind after another), else `false`.")
COEX_SETTING(Double, first_split_compile_seconds, 0.2, (0.0, kNoLimit),
             "On PoCL, under auto, with `compile_ahead`: where PoCL's kernel cache lacks what the first split of a "
             "program compiles, a launch nothing has timed yet, of a kernel that loops, is first probed: a block of "
             "about 1/64 of its work-groups runs on the app's device, timed. It is split at once, its compiles paid "
             "in the app's process (0.12 to 0.8 s a kernel measured), only where that time promises the split saves "
             "more than this many seconds (the launch's time there less its share over the devices), half as many "
             "for a program whose source has no barrier (those compile faster), three times as many where the "
             "process builds for another kind of device too (five for two), and never where every other device "
             "waits for that process to build for it (nor probed there); the app's device's share is by compute "
             "units where all are PoCL CPU devices; otherwise it "
             "runs there whole while `coex compile-ahead` compiles, and so do the next launches until that ends. "
             "Only a launch that gives the same result run twice is probed (no buffer it may write is one it "
             "reads). `0`: split at once, unprobed (but not where every other device waits for that process).")
COEX_SETTING(Path, binary_cache, "", (),
             "The folder where coex keeps the binaries of its own builds (the rewritten program coex splits a "
             "kernel with, the app's program on the other devices), so that a later run of the program builds "
             "from them (about 1 ms a device) instead of from source (PoCL: 25 to 60 ms a device even with "
             "its kernel cache warm, in turn, and the first split launch waits for them). A binary is used "
             "only for the same platform, device name, driver version, build options and source; a source with "
             "an #include, or options with -I, is never kept. The folder keeps the 256 most recently used. "
             "coex's kernel analyses of the programs go in its `analyses` folder, read only by the same build "
             "of coex for the same source and options: a later run's first launch does not wait for libclang. "
             "Empty: `binaries` beside the history file (setting cache); `off`: nothing kept or read.")

COEX_SETTING(Bool, analysis_process, true, (),
             "The kernel analysis (libclang) runs in a process of its own, `coex analysis-process`, which "
             "libcoex.so starts from the `coex` program beside it (or in the install's program directory): "
             "loading libclang in the app's process held up the app's first build (about 16 ms on the device "
             "machine), and a libclang crash there would end the app. `false`, or where no `coex` program is "
             "found: libclang is loaded into the app's process.")

// --- What coex tells you ---
COEX_SETTING(Enum, log, "warn", ("trace debug info warn error off"),
             "How much coex writes to stderr. At `warn`, one line when the app's first launch shows what coex "
             "will do (the devices it splits across, or why it will split nothing and what to change) and one "
             "at exit when it split nothing; `info` adds a summary at exit. `error` or `off` silences them.")
COEX_SETTING(Path, report, "", (),
             "Write the JSON report to this path when the program exits; empty: no report. `%p` in the path "
             "is the process id (as in LLVM_PROFILE_FILE), so that each process of a script keeps its own "
             "report: `r.%p.json`. `coex report FILE` prints it as tables, `coex report --html OUT FILE` as a "
             "page. With a report, launches coex does not split are timed on the app's device (an event and a "
             "callback each): the first 8 of each kernel, then one in 512, whose time stands for the others; "
             "with a trace, every one.")
COEX_SETTING(Path, trace, "", (),
             "Write a Chrome trace-event JSON file here when the program exits (open it in "
             "https://ui.perfetto.dev): one track per device (`d<index> <name>`) with its builds, transfers, "
             "sub-launches, merges and the launches it ran unsplit for the app, a track of launches, and one "
             "track per app thread of its OpenCL calls. `%p` is the process id, as in `report`. Empty: no trace.")
COEX_SETTING(Path, cache, "", (),
             "The file that keeps performance history across runs, so that a second run starts balanced; it "
             "keeps one history per device set (the 8 last used), and the report names it. Empty: "
             "`$XDG_CACHE_HOME/coex/history.json` (or `~/.cache/coex/history.json`). Tests and benchmarks "
             "should name their own, or one run's measurements steer the next (`one_device_pays`).")

// --- Policy `static` ---
COEX_POLICY_PARAM(Enum, static_mode, "equal", ("equal ratio spec"),
                  "`equal`: the same share for every device. `ratio`: shares proportional to `weights`. "
                  "`spec`: weights from device info (compute units x clock, a GPU's unit counting for 8 CPU "
                  "cores).")
COEX_POLICY_PARAM(DoubleList, weights, {}, (0.0, kNoLimit),
                  "Weights for `static_mode` `ratio`: one per device, in the order of `coex devices` after "
                  "`devices` has selected them; a device past the list gets none. Environment: comma-separated, "
                  "e.g. `COEX_WEIGHTS=3,1`.")
COEX_POLICY_PARAM(Bool, memory_bound, false, (),
                  "For `static_mode` `spec`: weigh the devices by memory bandwidth instead of compute units x "
                  "clock (a memory-bound kernel).")

// --- Policy `boyer` (Boyer et al., CF'13) ---
COEX_POLICY_PARAM(Double, boyer_beta, 0.07, (0.0, 1.0, true),
                  "The first chunk on each device, as a fraction of the launch's work.")
COEX_POLICY_PARAM(Double, boyer_delta, 1.5, (1.0, 100.0),
                  "Each later profiling chunk on a device is this many times its previous one.")
COEX_POLICY_PARAM(Int, boyer_gamma, 2, (1, 1000),
                  "Profiling chunks every device completes before the rest is split in one final chunk per "
                  "device.")
COEX_POLICY_PARAM(Bool, boyer_count_running, true, (),
                  "The final split counts the time left on the chunks still running (lambda), so that all "
                  "devices finish together. `false`: it splits as if every device were idle.")

// --- Policy `plbhec` (Sant'Ana et al., CLUSTER'15) ---
COEX_POLICY_PARAM(Double, plbhec_initial_fraction, 0.01, (0.0, 0.5, true),
                  "The first profiling block of the fastest device, as a fraction of the launch's work; it "
                  "doubles each round, and the other devices' blocks are scaled by their speed.")
COEX_POLICY_PARAM(Int, plbhec_profile_rounds, 3, (1, 30),
                  "Profiling blocks per device before the rest is split by the fitted time models.")
COEX_POLICY_PARAM(Double, plbhec_drift, 0.5, (0.0, kNoLimit, true),
                  "Profile again when the devices' finish times drift apart by more than this fraction.")

// --- Policies `jitp`, `wp`, `ess` (Strack 2020) ---
COEX_POLICY_PARAM(Double, wp_omega, 0.5, (0.0, 1.0),
                  "`wp`: the weight w of the previous share in `p_i <- w*p_i + (1-w)*measured share`. (`jitp` "
                  "uses 0.)")
COEX_POLICY_PARAM(Double, wp_tail, 0.0, (0.0, 0.9),
                  "`jitp`, `wp`, `ess`: this fraction of each launch is not split at its start but handed out "
                  "on demand, in shrinking chunks sized as `hguided` sizes them with the shares as speeds, to "
                  "whichever device is free first: a device whose pace changed since its share was measured is "
                  "evened out. 0 (Strack's own) splits the whole launch at its start.")
COEX_POLICY_PARAM(Int, ess_launches, 10, (1, 1000000),
                  "`ess`: launches of a kernel over which the shares are estimated; then they are frozen.")
COEX_POLICY_PARAM(Int, probe_interval, 10, (1, 1000000),
                  "`jitp`, `wp`, `ess`: every this many launches of a kernel and size, a device left without "
                  "work gets `probe_share` of the launch, to be measured again. `auto`: the first gap between "
                  "probes of a split it does not make (then 2x, 4x, ...), counted from each run's first launch.")
COEX_POLICY_PARAM(Double, probe_share, 0.02, (0.0, 0.5, true),
                  "`jitp`, `wp`, `ess`: the share of the launch a probed device gets.")

// --- Policy `hguided` (Perez et al.) ---
COEX_POLICY_PARAM(Double, hguided_k, 2.0, (0.0, kNoLimit, true),
                  "The divisor k in `chunk = max(min_chunk, floor(R*P_i / (k*sum P)))`; R: work-groups left, "
                  "P_i: speed of device i.")
COEX_POLICY_PARAM(Int, min_chunk_groups, 0, (0, int64_t{1} << 40),
                  "Smallest chunk of `hguided`, in work-groups. 0: the occupancy floor (one work-group per CPU "
                  "compute unit; on GPUs the work-groups for full occupancy).")

// --- Policy `adaptive` ---
COEX_POLICY_PARAM(Double, adaptive_probe_fraction, 0.01, (0.0, 0.5, true),
                  "The first probe chunk on each device, as a fraction of the launch's work.")
COEX_POLICY_PARAM(Double, adaptive_growth, 2.0, (1.0, 100.0),
                  "Each probe chunk is this many times the previous one, until the rest is split statically.")
COEX_POLICY_PARAM(Int, adaptive_probes, 3, (1, 30),
                  "Probe chunks per device: once one device has run them all and every device has finished "
                  "one, the rest is split once, for equal finish times, from each device's latest probe.")

// --- Policy `sigmoid` (Perez et al., JPDC'21) ---
COEX_POLICY_PARAM(Double, sigmoid_k, 2.0, (0.0, kNoLimit, true),
                  "k in `package = (G/2N) * (S_i/sum S) * tanh(3k * G_r/G)`, for regular kernels.")
COEX_POLICY_PARAM(Double, sigmoid_irregular_k, 0.5, (0.0, kNoLimit, true),
                  "k once a kernel is found irregular (it stays irregular for the launch).")
COEX_POLICY_PARAM(Double, sigmoid_cv_threshold, 0.25, (0.0, kNoLimit, true),
                  "A kernel is irregular for the rest of the launch when `sigma/mean` of a device's last "
                  "`sigmoid_window` package speeds (its first run of the kernel left out) exceeds this; for later "
                  "launches it is kept irregular when the packages' paces also followed the range "
                  "(docs/schedulers.md, \"sigmoid\").")
COEX_POLICY_PARAM(Int, sigmoid_window, 3, (2, 100),
                  "Packages in a device's speed window (its first run of the kernel left out): its speed S_i is "
                  "their mean, and their spread decides whether the kernel is irregular.")
COEX_POLICY_PARAM(Double, sigmoid_floor_p, 0.05, (0.0, 1.0),
                  "p in the package floor: the larger of `p * t_elapsed * S_i` and the occupancy floor.")

// --- Policy `predict` (Dollinger & Loechner, IMPACT'15) ---
COEX_POLICY_PARAM(Int, predict_max_steps, 15, (1, 1000),
                  "Most refinement steps of the split towards equal predicted times.")
COEX_POLICY_PARAM(Double, predict_eliminate, 0.1, (0.0, 1.0),
                  "A device whose share is below this fraction of the largest share gets no work.")
COEX_POLICY_PARAM(Double, predict_calibration_fraction, 0.1, (0.0, 0.5, true),
                  "When a device has no time model of the kernel yet: the work spent on calibration probes "
                  "(c, 2c, 4c work-groups per device), as a fraction of the launch.")
COEX_POLICY_PARAM(Double, predict_tolerance, 0.01, (0.0, 1.0, true),
                  "The refinement of the split stops once the predicted times differ by less than this "
                  "fraction.")

// --- Policy `auto` (docs/schedulers.md, "The auto rule") ---
COEX_POLICY_PARAM(Int, auto_repeat_launches, 1, (1, 1000000),
                  "auto: a kernel and size with at least this many earlier launches in the history, and a "
                  "time model on every device, goes to `wp`.")
COEX_POLICY_PARAM(Double, auto_wp_tail, 0.5, (0.0, 0.9),
                  "auto: the `wp_tail` of the `wp` launches it plans (`auto:wp+tail`), where a chunk's overhead "
                  "is at most `auto_overhead_fraction` of the predicted launch time; otherwise, and at 0, its "
                  "`wp` launches are split whole at their start (`auto:wp`).")
COEX_POLICY_PARAM(Double, auto_overhead_fraction, 0.01, (0.0, 1.0),
                  "auto: a first launch at a new size goes to `boyer` (few chunks) instead of `sigmoid` when a "
                  "chunk's overhead is above this fraction of the predicted launch time.")
COEX_POLICY_PARAM(Double, auto_rebalance_below, 0.8, (0.0, 1.0),
                  "auto: a `wp` launch balanced worse than this (first finish / last finish) right after one "
                  "balanced better means the machine changed: the next launch measures again with `sigmoid`; "
                  "where that launch was plain `wp` on trial against `wp+tail` (timed against each other), the "
                  "tail is kept instead.")
COEX_POLICY_PARAM(Double, auto_min_share, 0.05, (0.0, 1.0),
                  "auto: a device whose predicted share of a launch (from its measured times) is below this "
                  "fraction gets no work; when that leaves the home device alone, the launch is not split.")
COEX_POLICY_PARAM(Double, auto_min_gain, 0.05, (0.0, 1.0),
                  "auto: a split whose measured launches (from the start of the job to the end of its merge) "
                  "were not at least this fraction faster than the home device alone is not made: the launch "
                  "runs unsplit on home, until a probe measures the split again.")
COEX_POLICY_PARAM(Int, auto_probe_streak, 3, (1, 1000),
                  "auto: a probe splits this many launches of the kernel and size in a row. A split that "
                  "follows a launch left on home first moves each device's part of the data to it; one that "
                  "follows a split moves what changed at the parts' edges: the verdict reads the latter when "
                  "there is one.")
COEX_POLICY_PARAM(Double, auto_probe_cost, 0.05, (0.0, 1000.0),
                  "auto: a probe (a split made again to re-measure it, auto_probe_streak launches in a row) "
                  "is skipped while those splits were last measured to take longer than the home device alone "
                  "by more than this fraction of home's time over the launches since the previous probe; the "
                  "gaps between probes double, so it comes later. 0 also lets a kernel's first launches take "
                  "one slow split for a verdict.")
// Read by the executor's planner, not by a policy: a plain setting.
COEX_SETTING(Double, auto_wait_seconds, 0.05, (0.0, kNoLimit),
             "auto: a launch waits for what a split needs once (coex's analysis of the program, its builds on the "
             "devices) only when an unsplit launch of its kernel and size was measured to take at least this many "
             "seconds on the app's device (its wait for coex's build there is bounded: `auto_home_build_wait`); "
             "until then launches run unsplit on the app's device while coex "
             "prepares off their path (`not_split: preparing`), and are timed. While only the app's device is "
             "ready, a launch measured shorter than this there (or, at another size, by the kernel's pace there) "
             "is not split either: a device still building could not join it in time.")
COEX_SETTING(Double, auto_split_floor_seconds, 0.00005, (0.0, kNoLimit),
             "auto: a launch that takes less than this many seconds per device that could take part (0.1 ms over "
             "two, 0.4 ms over eight) on the app's device, unsplit, stays there (`not_split: too_small`), "
             "however many work-items it has: a split costs about that beyond its work (0.07 ms over two "
             "single-threaded PoCL devices, 0.3 to 1 ms over eight). Its time there: its kernel and size "
             "measured, or at a size not measured yet the kernel's pace there. Such a launch then neither "
             "reads what its first split would need nor builds it on the other devices, and a kernel without "
             "loops starts no `compile_ahead` process before home timed three launches of its size (two of ten "
             "times this or more), or one of "
             "`first_split_compile_seconds` or more, or, at a size not timed yet, the kernel's pace (one started "
             "at the app's clBuildProgram, on cores of its own, is sent the variants at the first launch). 0: "
             "no such floor.")
COEX_SETTING(Double, auto_fresh_memory_gbs, 0.0, (0.0, kNoLimit),
             "auto: how fast, in GB/s, new memory takes its first writes (each new page is a fault the system "
             "serves: 0.74 GB/s on a 2-core virtual machine, where memory in use took 22.7). A first split of a "
             "kernel without loops moves the other devices' share of what it reads into coex's host copy, all of "
             "it on one thread, and then into each CPU device's new buffers: where that takes at least "
             "`min_split_seconds` at this speed, the launch runs on the app's device first, "
             "timed, and is split once a launch there takes as long as those moves (benchmarks/saxpy's first "
             "split over two such devices took 0.22 s against 15 ms unsplit). 0: measured once, at the first "
             "launch whose moves (the host copy's fill included) a hundredth of the nominal 8 GB/s would make "
             "that long (1 MiB written into new memory).")
COEX_SETTING(Double, auto_analysis_wait, 0.1, (0.0, kNoLimit),
             "auto: the first launch of a program that coex could split waits up to this many seconds for coex's "
             "analysis of the program (a libclang parse begun at clBuildProgram, tens of milliseconds) when at "
             "least two devices would take part and it has at least `min_split_work_items` for the app's device; "
             "beyond, and for the program's later launches until it ends, launches run unsplit on the app's device "
             "(`not_split: preparing`).")
COEX_SETTING(Double, auto_home_build_wait, 0.1, (0.0, kNoLimit),
             "auto: a launch coex would split, whose kernel needs coex's rewritten program and which nothing has "
             "timed on the app's device yet, waits up to this many seconds, or twice as long as the app's own "
             "clBuildProgram of the program took (at most 1 s) where that is longer, "
             "for coex's build of it on the app's device once the analysis is done (the other devices join the "
             "split as their builds end); beyond, it runs unsplit on the app's device (`not_split: preparing`). "
             "Launches timed there wait for that build no longer, all together, than a split could save of one "
             "(its time there times 1 - 1/N, N the devices that could take part), then run unsplit until it ends.")
COEX_SETTING(
    Grammar, auto_late_devices, "type:gpu,type:accelerator", (kDeviceSelectorGrammar, &check_device_selector),
    "auto: the devices, other than the app's own, that get no context nor build of coex's until the program "
    "has run launches coex could split over them for `auto_late_after` seconds (an H200's context took 1.2 "
    "to 2.1 s beside PoCL's CPU, and the exit waits for a context or build under way): a short program ends before and "
    "pays nothing for them; a longer one has them join from then on (`auto_late_cost`), once coex's analysis "
    "says some kernel of the program can be split, and its later runs from clBuildProgram (the history file "
    "remembers it). A launch nothing has timed yet that only they could take runs on the app's device whole, "
    "and with no other device to split with nothing is prepared for a split before they are let in (no "
    "analysis, no build of coex's). The same grammar as `devices`; `!all` names none.")
COEX_SETTING(Double, auto_late_after, 0.5, (0.0, kNoLimit),
             "auto: how long, from the first launch coex could split over a device of `auto_late_devices`, the "
             "program runs before that device gets its context and builds: at a launch measured at `min_split_seconds` "
             "or more on the app's device, or by a split launch still running then that has itself run "
             "`min_split_seconds`, each where `auto_late_cost` allows.")
COEX_SETTING(Double, auto_late_cost, 1.5, (0.0, kNoLimit),
             "auto: what a device of `auto_late_devices` is expected to take to get its context and build (an "
             "H200's context and build together took 1.2 to 2.4 s beside PoCL's CPU), and the exit waits for them "
             "once begun: it is let in "
             "only where a split launch still running has this long left at its pace so far, or a launch planned "
             "is measured this long on the app's device, or the program has run launches that could take it for "
             "this long (and may run as long again). 0: as soon as `auto_late_after` allows.")

// --- Testing ---
COEX_SETTING(Grammar, fault, "", (kFaultGrammar, &check_fault_spec),
             "Testing aid: `fail:<index>` makes that device's sub-launches fail, `stall:<index>` makes them "
             "wait for an event that never completes (until the app exits), `stall_upload:<index>` makes the "
             "upload before each of them last until another device takes the chunk over, `hung_upload:<index>` "
             "makes it last 20 s and not look at the take-over (a server gone away), `late_start:<index>` "
             "makes them reach the driver only once taken over and the app exiting, `throw_late:<index>` makes "
             "their thread throw once taken over (as a failed allocation would), `build:<index>` makes "
             "coex's build of each program for that device fail, `slow_build:<index>` makes each of them begin "
             "a second late, `merge_write:<index>` makes a merge that writes home at once (an app write queued "
             "behind the launch) fail to write home what that device changed, `slow_analysis` each program's "
             "analysis begin a second after its first launch that "
             "waits for it (ten seconds late where none does), `slow_libclang` the analysis process load "
             "libclang three seconds late (read from the environment it inherits), `no_libclang` every load of "
             "libclang fail (in the app's process, and in the analysis process where the environment says so), "
             "so that error paths "
             "can be tested on real drivers. A stalled device that is not the home device is taken over "
             "and left out. Empty in normal use.")

#ifdef COEX_POLICY_PARAM_AS_SETTING
#undef COEX_POLICY_PARAM
#undef COEX_POLICY_PARAM_AS_SETTING
#endif
