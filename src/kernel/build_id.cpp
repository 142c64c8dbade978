#include "kernel/build_id.h"

#include <elf.h>
#include <link.h>

#include <cstdint>
#include <cstring>
#include <fstream>
#include <vector>

namespace coex::kernel {
namespace {

struct BuildIdSearch {
  const void* address;  // an address inside the file sought
  std::string hex;
};

// The GNU build ID note of one PT_NOTE segment, or "" (notes are 4-aligned: ELF gABI, "Note Section").
std::string build_id_in_notes(const unsigned char* at, size_t size) {
  const unsigned char* end = at + size;
  auto aligned = [](size_t n) { return (n + 3) & ~size_t{3}; };
  while (static_cast<size_t>(end - at) >= sizeof(ElfW(Nhdr))) {
    ElfW(Nhdr) note;
    std::memcpy(&note, at, sizeof note);
    const unsigned char* name = at + sizeof note;
    const unsigned char* desc = name + aligned(note.n_namesz);
    if (desc > end || static_cast<size_t>(end - desc) < note.n_descsz) return "";
    if (note.n_type == NT_GNU_BUILD_ID && note.n_namesz == 4 && std::memcmp(name, "GNU", 4) == 0) {
      static const char digits[] = "0123456789abcdef";
      std::string hex;
      for (size_t i = 0; i < note.n_descsz; ++i) {
        hex += digits[desc[i] >> 4];
        hex += digits[desc[i] & 15];
      }
      return hex;
    }
    at = desc + aligned(note.n_descsz);
  }
  return "";
}

int search_object(dl_phdr_info* info, size_t, void* data) {
  auto* search = static_cast<BuildIdSearch*>(data);
  const auto address = reinterpret_cast<uintptr_t>(search->address);
  bool holds = false;
  for (int i = 0; i < info->dlpi_phnum && !holds; ++i) {
    const ElfW(Phdr)& p = info->dlpi_phdr[i];
    const uintptr_t start = info->dlpi_addr + p.p_vaddr;
    holds = p.p_type == PT_LOAD && address >= start && address < start + p.p_memsz;
  }
  if (!holds) return 0;
  for (int i = 0; i < info->dlpi_phnum && search->hex.empty(); ++i) {
    const ElfW(Phdr)& p = info->dlpi_phdr[i];
    if (p.p_type == PT_NOTE)
      search->hex = build_id_in_notes(reinterpret_cast<const unsigned char*>(info->dlpi_addr + p.p_vaddr), p.p_memsz);
  }
  return 1;
}

}  // namespace

std::string own_build_id() {
  BuildIdSearch search{reinterpret_cast<const void*>(&own_build_id), ""};
  dl_iterate_phdr(search_object, &search);
  return search.hex;
}

std::string file_build_id(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  ElfW(Ehdr) header{};
  if (!in.read(reinterpret_cast<char*>(&header), sizeof header) || std::memcmp(header.e_ident, ELFMAG, SELFMAG) != 0 ||
      header.e_ident[EI_CLASS] != (sizeof(void*) == 8 ? ELFCLASS64 : ELFCLASS32) ||
      header.e_phentsize != sizeof(ElfW(Phdr)))
    return "";
  for (int i = 0; i < header.e_phnum; ++i) {
    ElfW(Phdr) segment{};
    in.seekg(static_cast<std::streamoff>(header.e_phoff + i * sizeof segment));
    if (!in.read(reinterpret_cast<char*>(&segment), sizeof segment)) return "";
    if (segment.p_type != PT_NOTE || segment.p_filesz > (1u << 20)) continue;
    std::vector<unsigned char> notes(segment.p_filesz);
    in.seekg(static_cast<std::streamoff>(segment.p_offset));
    if (!in.read(reinterpret_cast<char*>(notes.data()), static_cast<std::streamsize>(notes.size()))) return "";
    std::string hex = build_id_in_notes(notes.data(), notes.size());
    if (!hex.empty()) return hex;
  }
  return "";
}

}  // namespace coex::kernel
