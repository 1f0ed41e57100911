// The options of a compile description as NVRTC receives them: each typed
// field spelled one way and checked once, for every language (the bindings
// hand values over and never build option strings of their own).
#pragma once

#include <cuabi/cuabi.h>

#include <cstddef>
#include <string>
#include <vector>

namespace cuabi {

// What the typed fields and the raw options of a compile description give.
struct CompileOptions {
  std::vector<std::string> nvrtc;   // typed options first, in field order, then the raw ones
  bool names_architecture = false;  // `arch` is set, or a raw option names a target
};

// Checks `d`'s typed fields and raw options (INVALID_ARGUMENT naming the field,
// "desc->defines[2]", and why) and turns them into NVRTC's options. `d` holds
// every field of this library's version (read_struct gave it its defaults).
CompileOptions compile_options(const cuabi_compile_desc& d);

// Throws INVALID_ARGUMENT (calling it `what`) unless `define` is "NAME",
// "NAME=VALUE" or "F(a,b)=VALUE" as the header documents for
// cuabi_compile_desc.defines.
void check_define(const char* define, const std::string& what);

class Program;
// cuabi_program_compile_with: compiles `program` with `desc`'s options,
// refusing the fields that are the program's own (source, headers, ...).
void compile_program_with(Program& program, const cuabi_compile_desc* desc);

// True when a raw NVRTC option names the target architecture.
bool names_architecture(const char* option);

}  // namespace cuabi
