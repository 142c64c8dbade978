#include "kernel/opencl_fallback_prelude.h"

#include <string>

namespace coex::kernel {
namespace {

// Scalar type names of OpenCL C (spec 6.1.1) that clang does not know without the base header.
const char* const kScalarTypedefs = R"(
typedef unsigned char uchar;
typedef unsigned short ushort;
typedef unsigned int uint;
typedef unsigned long ulong;
typedef __SIZE_TYPE__ size_t;
typedef __PTRDIFF_TYPE__ ptrdiff_t;
typedef __INTPTR_TYPE__ intptr_t;
typedef __UINTPTR_TYPE__ uintptr_t;
typedef uint cl_mem_fence_flags;
)";

// Constants of spec 6.13.2 (math), 6.13.3 (integer limits), 6.13.8 (fences) and 6.13.14 (samplers
// and image formats). Limits come from clang's predefined macros, so they are right for the target.
const char* const kConstants = R"(
#define CHAR_BIT 8
#define SCHAR_MAX __SCHAR_MAX__
#define SCHAR_MIN (-SCHAR_MAX - 1)
#define CHAR_MAX SCHAR_MAX
#define CHAR_MIN SCHAR_MIN
#define UCHAR_MAX 255
#define SHRT_MAX __SHRT_MAX__
#define SHRT_MIN (-SHRT_MAX - 1)
#define USHRT_MAX 65535
#define INT_MAX __INT_MAX__
#define INT_MIN (-INT_MAX - 1)
#define UINT_MAX 0xffffffffU
#define LONG_MAX __LONG_MAX__
#define LONG_MIN (-LONG_MAX - 1L)
#define ULONG_MAX 0xffffffffffffffffUL
#define FLT_DIG __FLT_DIG__
#define FLT_MANT_DIG __FLT_MANT_DIG__
#define FLT_MAX_10_EXP __FLT_MAX_10_EXP__
#define FLT_MAX_EXP __FLT_MAX_EXP__
#define FLT_MIN_10_EXP __FLT_MIN_10_EXP__
#define FLT_MIN_EXP __FLT_MIN_EXP__
#define FLT_RADIX 2
#define FLT_MAX __FLT_MAX__
#define FLT_MIN __FLT_MIN__
#define FLT_EPSILON __FLT_EPSILON__
#define DBL_DIG __DBL_DIG__
#define DBL_MANT_DIG __DBL_MANT_DIG__
#define DBL_MAX_10_EXP __DBL_MAX_10_EXP__
#define DBL_MAX_EXP __DBL_MAX_EXP__
#define DBL_MIN_10_EXP __DBL_MIN_10_EXP__
#define DBL_MIN_EXP __DBL_MIN_EXP__
#define DBL_MAX __DBL_MAX__
#define DBL_MIN __DBL_MIN__
#define DBL_EPSILON __DBL_EPSILON__
#define MAXFLOAT __FLT_MAX__
#define HUGE_VALF __builtin_huge_valf()
#define HUGE_VAL __builtin_huge_val()
#define INFINITY __builtin_inff()
#define NAN __builtin_nanf("")
#define FP_ILOGB0 INT_MIN
#define FP_ILOGBNAN INT_MAX
#define M_E 2.718281828459045
#define M_LOG2E 1.4426950408889634
#define M_LOG10E 0.4342944819032518
#define M_LN2 0.6931471805599453
#define M_LN10 2.302585092994046
#define M_PI 3.141592653589793
#define M_PI_2 1.5707963267948966
#define M_PI_4 0.7853981633974483
#define M_1_PI 0.3183098861837907
#define M_2_PI 0.6366197723675814
#define M_2_SQRTPI 1.1283791670955126
#define M_SQRT2 1.4142135623730951
#define M_SQRT1_2 0.7071067811865476
#define M_E_F 2.7182817f
#define M_LOG2E_F 1.442695f
#define M_LOG10E_F 0.4342945f
#define M_LN2_F 0.6931472f
#define M_LN10_F 2.3025851f
#define M_PI_F 3.1415927f
#define M_PI_2_F 1.5707964f
#define M_PI_4_F 0.7853982f
#define M_1_PI_F 0.31830987f
#define M_2_PI_F 0.63661975f
#define M_2_SQRTPI_F 1.1283792f
#define M_SQRT2_F 1.4142135f
#define M_SQRT1_2_F 0.70710677f
#define CLK_LOCAL_MEM_FENCE 0x01
#define CLK_GLOBAL_MEM_FENCE 0x02
#define CLK_IMAGE_MEM_FENCE 0x04
#define CLK_NORMALIZED_COORDS_FALSE 0x0
#define CLK_NORMALIZED_COORDS_TRUE 0x1
#define CLK_ADDRESS_NONE 0x0
#define CLK_ADDRESS_CLAMP_TO_EDGE 0x2
#define CLK_ADDRESS_CLAMP 0x4
#define CLK_ADDRESS_REPEAT 0x6
#define CLK_ADDRESS_MIRRORED_REPEAT 0x8
#define CLK_FILTER_NEAREST 0x10
#define CLK_FILTER_LINEAR 0x20
#define CLK_SNORM_INT8 0x10D0
#define CLK_SNORM_INT16 0x10D1
#define CLK_UNORM_INT8 0x10D2
#define CLK_UNORM_INT16 0x10D3
#define CLK_UNORM_SHORT_565 0x10D4
#define CLK_UNORM_SHORT_555 0x10D5
#define CLK_UNORM_INT_101010 0x10D6
#define CLK_SIGNED_INT8 0x10D7
#define CLK_SIGNED_INT16 0x10D8
#define CLK_SIGNED_INT32 0x10D9
#define CLK_UNSIGNED_INT8 0x10DA
#define CLK_UNSIGNED_INT16 0x10DB
#define CLK_UNSIGNED_INT32 0x10DC
#define CLK_HALF_FLOAT 0x10DD
#define CLK_FLOAT 0x10DE
#define CLK_UNORM_INT24 0x10DF
#define CLK_R 0x10B0
#define CLK_A 0x10B1
#define CLK_RG 0x10B2
#define CLK_RA 0x10B3
#define CLK_RGB 0x10B4
#define CLK_RGBA 0x10B5
#define CLK_BGRA 0x10B6
#define CLK_ARGB 0x10B7
#define CLK_INTENSITY 0x10B8
#define CLK_LUMINANCE 0x10B9
#define CLK_Rx 0x10BA
#define CLK_RGx 0x10BB
#define CLK_RGBx 0x10BC
#define CLK_DEPTH 0x10BD
#define CLK_DEPTH_STENCIL 0x10BE
#define CLK_sRGB 0x10BF
#define CLK_sRGBx 0x10C0
#define CLK_sRGBA 0x10C1
#define CLK_sBGRA 0x10C2
#define CLK_ABGR 0x10C3
#define __kernel_exec(X, typen) __kernel __attribute__((work_group_size_hint(X, 1, 1))) \
  __attribute__((vec_type_hint(typen)))
#define kernel_exec(X, typen) __kernel_exec(X, typen)
)";

// OpenCL C 2.0 additions (spec 6.13.11 atomics, 6.13.17 enqueue): the feature macros that the
// builtin table checks, the enums it looks up and the enqueue constants. clang itself declares the
// atomic_* type names for OpenCL C 2.0.
const char* const kOpenCL20 = R"(
#if defined(__OPENCL_C_VERSION__) && __OPENCL_C_VERSION__ == 200
#define __opencl_c_pipes 1
#define __opencl_c_generic_address_space 1
#define __opencl_c_work_group_collective_functions 1
#define __opencl_c_atomic_order_acq_rel 1
#define __opencl_c_atomic_order_seq_cst 1
#define __opencl_c_atomic_scope_device 1
#define __opencl_c_atomic_scope_all_devices 1
#define __opencl_c_device_enqueue 1
#define __opencl_c_read_write_images 1
#define __opencl_c_program_scope_global_variables 1
#define __opencl_c_images 1
#endif
#if !defined(__opencl_c_generic_address_space)
#define __opencl_c_named_address_space_builtins 1
#endif
#if defined(__OPENCL_C_VERSION__) && __OPENCL_C_VERSION__ >= 200
typedef enum memory_order {
  memory_order_relaxed = __ATOMIC_RELAXED,
  memory_order_acquire = __ATOMIC_ACQUIRE,
  memory_order_release = __ATOMIC_RELEASE,
  memory_order_acq_rel = __ATOMIC_ACQ_REL,
  memory_order_seq_cst = __ATOMIC_SEQ_CST
} memory_order;
typedef enum memory_scope {
  memory_scope_work_item = __OPENCL_MEMORY_SCOPE_WORK_ITEM,
  memory_scope_work_group = __OPENCL_MEMORY_SCOPE_WORK_GROUP,
  memory_scope_device = __OPENCL_MEMORY_SCOPE_DEVICE,
  memory_scope_all_svm_devices = __OPENCL_MEMORY_SCOPE_ALL_SVM_DEVICES,
  memory_scope_all_devices = __OPENCL_MEMORY_SCOPE_ALL_SVM_DEVICES,
  memory_scope_sub_group = __OPENCL_MEMORY_SCOPE_SUB_GROUP
} memory_scope;
#define ATOMIC_VAR_INIT(x) (x)
#define ATOMIC_FLAG_INIT 0
typedef struct {
  unsigned int workDimension;
  size_t globalWorkOffset[3];
  size_t globalWorkSize[3];
  size_t localWorkSize[3];
} ndrange_t;
typedef int kernel_enqueue_flags_t;
typedef int clk_profiling_info;
#define CLK_ENQUEUE_FLAGS_NO_WAIT 0
#define CLK_ENQUEUE_FLAGS_WAIT_KERNEL 1
#define CLK_ENQUEUE_FLAGS_WAIT_WORK_GROUP 2
#define CLK_PROFILING_COMMAND_EXEC_TIME 0x1
#define CLK_SUCCESS 0
#define CLK_ENQUEUE_FAILURE -101
#define CLK_INVALID_QUEUE -102
#define CLK_INVALID_NDRANGE -160
#define CLK_INVALID_EVENT_WAIT_LIST -57
#define CLK_DEVICE_QUEUE_FULL -161
#define CLK_INVALID_ARG_SIZE -51
#define CLK_EVENT_ALLOCATION_FAILURE -100
#define CLK_OUT_OF_RESOURCES -5
#define CLK_NULL_QUEUE 0
#define CLK_NULL_EVENT (__builtin_astype(((__SIZE_TYPE__)-1), clk_event_t))
#define CLK_NULL_RESERVE_ID (__builtin_astype(((void *)(__SIZE_TYPE__)-1), reserve_id_t))
#endif
)";

const char* const kVectorElementTypes[] = {"char", "uchar", "short", "ushort", "int", "uint",
                                           "long", "ulong", "float"};
const int kVectorWidths[] = {2, 3, 4, 8, 16};

// typedefs of the vector types of one element type (spec 6.1.2) and the as_<type>() operators
// (spec 6.2.4.2) of the scalar and its vectors.
void append_vector_family(std::string& out, const std::string& element) {
  out += "#define as_" + element + "(x) __builtin_astype((x), " + element + ")\n";
  for (int width : kVectorWidths) {
    std::string name = element + std::to_string(width);
    out += "typedef " + element + " " + name + " __attribute__((ext_vector_type(" + std::to_string(width) +
           ")));\n";
    out += "#define as_" + name + "(x) __builtin_astype((x), " + name + ")\n";
  }
}

std::string build_prelude() {
  std::string out = kScalarTypedefs;
  for (const char* element : kVectorElementTypes) append_vector_family(out, element);
  out += "#ifdef cl_khr_fp64\n";
  append_vector_family(out, "double");
  out += "#endif\n#ifdef cl_khr_fp16\n";
  append_vector_family(out, "half");
  out += "#endif\n";
  out += kConstants;
  out += kOpenCL20;
  return out;
}

}  // namespace

const char* opencl_fallback_prelude() {
  static const std::string prelude = build_prelude();
  return prelude.c_str();
}

}  // namespace coex::kernel
