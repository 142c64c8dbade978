// libclang, loaded at run time with dlopen(RTLD_LOCAL) instead of linked. coex lives inside the
// app's process next to the OpenCL drivers, and some of them carry their own LLVM: linked, libclang
// puts its libLLVM in the global symbol scope, and PoCL's LLVM (15 on Debian 12, against
// libclang 14) then binds to it and crashes in its first kernel build (seen here, see
// docs/kernel-analysis.md). Loaded locally, each LLVM keeps its own symbols.
//
// Every file of src/kernel includes this header instead of <clang-c/Index.h>: the clang_*
// functions it uses become function pointers filled by libclang::load(). Only functions of the
// libclang 14 C API are listed, so any libclang from 14 on serves. Enum values are those of the
// 14 headers: compare only those that stayed put (CXCursor_TranslationUnit moved from 300 to 350
// in 15: use clang_isTranslationUnit and the other clang_is* functions for categories).
#pragma once

#include <clang-c/Index.h>

#include <functional>
#include <optional>
#include <string>

#define COEX_LIBCLANG_FUNCTIONS(X)                                                                              \
  X(clang_Cursor_Evaluate) X(clang_Cursor_getArgument) X(clang_Cursor_getNumArguments)                          \
  X(clang_Cursor_getStorageClass) X(clang_Cursor_isMacroFunctionLike) X(clang_Cursor_isNull)                    \
  X(clang_EvalResult_dispose) X(clang_EvalResult_getAsLongLong) X(clang_EvalResult_getKind)                     \
  X(clang_EvalResult_isUnsignedInt) X(clang_EvalResult_getAsUnsigned)                                           \
  X(clang_File_isEqual) X(clang_Location_isInSystemHeader) X(clang_Type_getSizeOf) X(clang_Type_visitFields)    \
  X(clang_createIndex) X(clang_disposeDiagnostic) X(clang_disposeIndex) X(clang_disposeString)                  \
  X(clang_disposeTokens) X(clang_disposeTranslationUnit) X(clang_equalLocations) X(clang_equalTypes)            \
  X(clang_equalCursors) X(clang_formatDiagnostic) X(clang_getArrayElementType) X(clang_getCString)              \
  X(clang_getCanonicalType) X(clang_getCursorDefinition) X(clang_getCursorExtent) X(clang_getCursorKind)        \
  X(clang_getCursorLocation) X(clang_getCursorReferenced) X(clang_getCursorSemanticParent)                      \
  X(clang_getCursorSpelling) X(clang_getCursorType) X(clang_getCursorUSR) X(clang_getDiagnostic)                \
  X(clang_getDiagnosticLocation) X(clang_getDiagnosticSeverity) X(clang_getExpansionLocation) X(clang_getFile)  \
  X(clang_getFileContents) X(clang_getFileName) X(clang_getFunctionTypeCallingConv) X(clang_getLocationForOffset) \
  X(clang_getNullCursor) X(clang_getNumDiagnostics) X(clang_getNumElements) X(clang_getPointeeType)             \
  X(clang_getRange) X(clang_getRangeEnd) X(clang_getRangeStart) X(clang_getSpellingLocation)                    \
  X(clang_getTokenExtent) X(clang_getTokenKind) X(clang_getTokenSpelling) X(clang_getTranslationUnitCursor)     \
  X(clang_getTypeSpelling) X(clang_isConstQualifiedType) X(clang_isCursorDefinition) X(clang_isExpression)      \
  X(clang_isInvalidDeclaration) X(clang_parseTranslationUnit2) X(clang_tokenize) X(clang_visitChildren)         \
  X(clang_getClangVersion) X(clang_isTranslationUnit) X(clang_hashCursor) X(clang_Cursor_getOffsetOfField)

namespace coex::kernel::libclang {

#define COEX_LIBCLANG_DECLARE(name) extern decltype(&::name) name;
COEX_LIBCLANG_FUNCTIONS(COEX_LIBCLANG_DECLARE)
#undef COEX_LIBCLANG_DECLARE

// Loads libclang once per process: the preferred path when one was set, else the newest
// libclang-N.so.1 (N = 14..24) the dynamic linker finds, else /usr/lib/llvm-N/lib/libclang.so.1,
// else libclang.so.1. False, with the reason, when none has every function listed above.
bool load(std::string* why_not = nullptr);
// What load() found, without waiting for a load under way: nullopt while none has ended.
std::optional<bool> loaded_without_waiting(std::string* why_not = nullptr);
// Said when a load is posted to run in the background (exec/device_kernels.cpp) or the analysis process
// loads it: the first launch's notice then tells the user when no kernel can be analysed, where that
// is known by then (it waits for nothing; the analysis tells it otherwise). Where nothing asked for
// libclang yet (every device but home held back) the notice loads nothing: a load on the app's thread
// would hold the dynamic linker's lock there for tens of milliseconds.
void load_wanted();
bool is_load_wanted();
// What the user is told when no libclang could be loaded (`why`: load()'s reason).
// With `some_kept`: programs whose analyses earlier runs kept (exec/kept_analyses.h) are split all
// the same, and the line says that only the others are not.
std::string missing_notice(const std::string& why, bool some_kept = false);
// True for the first caller only: whoever tells the user that libclang is missing (the first launch's
// notice, or the first analysis asked for later) claims it, so that it is told once.
bool claim_missing_notice();
// A path tried first (a setting may point at a libclang of its own); before the first load().
void set_preferred_path(const std::string& path);
// Every load() from now on fails with `why` (COEX_FAULT=no_libclang: a machine without libclang),
// when it is tried, as on such a machine; before the first load().
void refuse_loads(const std::string& why);
inline constexpr const char* kRefusedByFault = "no libclang loaded: COEX_FAULT=no_libclang, a testing aid";
// "clang version 16.0.6 ..." of the loaded library; "" before load() succeeded.
std::string version();
// Runs work (which must not throw) on coex's parser thread, which has an 8 MiB stack, and waits
// for it: libclang parses on the calling thread (libclang_api.cpp says why), an app's thread may
// have a small stack, and clang's parser recurses deeply. One call at a time; in place when no
// thread can be started.
void run_on_parser_stack(const std::function<void()>& work);

}  // namespace coex::kernel::libclang

// From here on, clang_x(...) calls the loaded function (the loader itself sees the real names).
#ifndef COEX_LIBCLANG_NO_REDIRECT
#define COEX_LIBCLANG_REDIRECT(name) ::coex::kernel::libclang::name
#define clang_Cursor_Evaluate COEX_LIBCLANG_REDIRECT(clang_Cursor_Evaluate)
#define clang_Cursor_getArgument COEX_LIBCLANG_REDIRECT(clang_Cursor_getArgument)
#define clang_Cursor_getNumArguments COEX_LIBCLANG_REDIRECT(clang_Cursor_getNumArguments)
#define clang_Cursor_getStorageClass COEX_LIBCLANG_REDIRECT(clang_Cursor_getStorageClass)
#define clang_Cursor_isMacroFunctionLike COEX_LIBCLANG_REDIRECT(clang_Cursor_isMacroFunctionLike)
#define clang_Cursor_isNull COEX_LIBCLANG_REDIRECT(clang_Cursor_isNull)
#define clang_EvalResult_dispose COEX_LIBCLANG_REDIRECT(clang_EvalResult_dispose)
#define clang_EvalResult_getAsLongLong COEX_LIBCLANG_REDIRECT(clang_EvalResult_getAsLongLong)
#define clang_EvalResult_getKind COEX_LIBCLANG_REDIRECT(clang_EvalResult_getKind)
#define clang_EvalResult_isUnsignedInt COEX_LIBCLANG_REDIRECT(clang_EvalResult_isUnsignedInt)
#define clang_EvalResult_getAsUnsigned COEX_LIBCLANG_REDIRECT(clang_EvalResult_getAsUnsigned)
#define clang_File_isEqual COEX_LIBCLANG_REDIRECT(clang_File_isEqual)
#define clang_Location_isInSystemHeader COEX_LIBCLANG_REDIRECT(clang_Location_isInSystemHeader)
#define clang_Type_getSizeOf COEX_LIBCLANG_REDIRECT(clang_Type_getSizeOf)
#define clang_Type_visitFields COEX_LIBCLANG_REDIRECT(clang_Type_visitFields)
#define clang_createIndex COEX_LIBCLANG_REDIRECT(clang_createIndex)
#define clang_disposeDiagnostic COEX_LIBCLANG_REDIRECT(clang_disposeDiagnostic)
#define clang_disposeIndex COEX_LIBCLANG_REDIRECT(clang_disposeIndex)
#define clang_disposeString COEX_LIBCLANG_REDIRECT(clang_disposeString)
#define clang_disposeTokens COEX_LIBCLANG_REDIRECT(clang_disposeTokens)
#define clang_disposeTranslationUnit COEX_LIBCLANG_REDIRECT(clang_disposeTranslationUnit)
#define clang_equalLocations COEX_LIBCLANG_REDIRECT(clang_equalLocations)
#define clang_equalTypes COEX_LIBCLANG_REDIRECT(clang_equalTypes)
#define clang_equalCursors COEX_LIBCLANG_REDIRECT(clang_equalCursors)
#define clang_formatDiagnostic COEX_LIBCLANG_REDIRECT(clang_formatDiagnostic)
#define clang_getArrayElementType COEX_LIBCLANG_REDIRECT(clang_getArrayElementType)
#define clang_getCString COEX_LIBCLANG_REDIRECT(clang_getCString)
#define clang_getCanonicalType COEX_LIBCLANG_REDIRECT(clang_getCanonicalType)
#define clang_getCursorDefinition COEX_LIBCLANG_REDIRECT(clang_getCursorDefinition)
#define clang_getCursorExtent COEX_LIBCLANG_REDIRECT(clang_getCursorExtent)
#define clang_getCursorKind COEX_LIBCLANG_REDIRECT(clang_getCursorKind)
#define clang_getCursorLocation COEX_LIBCLANG_REDIRECT(clang_getCursorLocation)
#define clang_getCursorReferenced COEX_LIBCLANG_REDIRECT(clang_getCursorReferenced)
#define clang_getCursorSemanticParent COEX_LIBCLANG_REDIRECT(clang_getCursorSemanticParent)
#define clang_getCursorSpelling COEX_LIBCLANG_REDIRECT(clang_getCursorSpelling)
#define clang_getCursorType COEX_LIBCLANG_REDIRECT(clang_getCursorType)
#define clang_getCursorUSR COEX_LIBCLANG_REDIRECT(clang_getCursorUSR)
#define clang_getDiagnostic COEX_LIBCLANG_REDIRECT(clang_getDiagnostic)
#define clang_getDiagnosticLocation COEX_LIBCLANG_REDIRECT(clang_getDiagnosticLocation)
#define clang_getDiagnosticSeverity COEX_LIBCLANG_REDIRECT(clang_getDiagnosticSeverity)
#define clang_getExpansionLocation COEX_LIBCLANG_REDIRECT(clang_getExpansionLocation)
#define clang_getFile COEX_LIBCLANG_REDIRECT(clang_getFile)
#define clang_getFileContents COEX_LIBCLANG_REDIRECT(clang_getFileContents)
#define clang_getFileName COEX_LIBCLANG_REDIRECT(clang_getFileName)
#define clang_getFunctionTypeCallingConv COEX_LIBCLANG_REDIRECT(clang_getFunctionTypeCallingConv)
#define clang_getLocationForOffset COEX_LIBCLANG_REDIRECT(clang_getLocationForOffset)
#define clang_getNullCursor COEX_LIBCLANG_REDIRECT(clang_getNullCursor)
#define clang_getNumDiagnostics COEX_LIBCLANG_REDIRECT(clang_getNumDiagnostics)
#define clang_getNumElements COEX_LIBCLANG_REDIRECT(clang_getNumElements)
#define clang_getPointeeType COEX_LIBCLANG_REDIRECT(clang_getPointeeType)
#define clang_getRange COEX_LIBCLANG_REDIRECT(clang_getRange)
#define clang_getRangeEnd COEX_LIBCLANG_REDIRECT(clang_getRangeEnd)
#define clang_getRangeStart COEX_LIBCLANG_REDIRECT(clang_getRangeStart)
#define clang_getSpellingLocation COEX_LIBCLANG_REDIRECT(clang_getSpellingLocation)
#define clang_getTokenExtent COEX_LIBCLANG_REDIRECT(clang_getTokenExtent)
#define clang_getTokenKind COEX_LIBCLANG_REDIRECT(clang_getTokenKind)
#define clang_getTokenSpelling COEX_LIBCLANG_REDIRECT(clang_getTokenSpelling)
#define clang_getTranslationUnitCursor COEX_LIBCLANG_REDIRECT(clang_getTranslationUnitCursor)
#define clang_getTypeSpelling COEX_LIBCLANG_REDIRECT(clang_getTypeSpelling)
#define clang_isConstQualifiedType COEX_LIBCLANG_REDIRECT(clang_isConstQualifiedType)
#define clang_isCursorDefinition COEX_LIBCLANG_REDIRECT(clang_isCursorDefinition)
#define clang_isExpression COEX_LIBCLANG_REDIRECT(clang_isExpression)
#define clang_isInvalidDeclaration COEX_LIBCLANG_REDIRECT(clang_isInvalidDeclaration)
#define clang_parseTranslationUnit2 COEX_LIBCLANG_REDIRECT(clang_parseTranslationUnit2)
#define clang_tokenize COEX_LIBCLANG_REDIRECT(clang_tokenize)
#define clang_visitChildren COEX_LIBCLANG_REDIRECT(clang_visitChildren)
#define clang_getClangVersion COEX_LIBCLANG_REDIRECT(clang_getClangVersion)
#define clang_isTranslationUnit COEX_LIBCLANG_REDIRECT(clang_isTranslationUnit)
#define clang_hashCursor COEX_LIBCLANG_REDIRECT(clang_hashCursor)
#define clang_Cursor_getOffsetOfField COEX_LIBCLANG_REDIRECT(clang_Cursor_getOffsetOfField)
#endif  // COEX_LIBCLANG_NO_REDIRECT
