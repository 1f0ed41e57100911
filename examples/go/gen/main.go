// Command gen writes the C declarations that the Go SAXPY example calls
// cuabi through, from cuabi.json alone (the machine-readable description of
// the API, installed beside cuabi.h):
//
//	cuabi_gen.h  every type, struct, constant and enum value, and one static
//	             inline function per API function that calls through a
//	             pointer found with dlsym
//	cuabi_gen.c  the table of those pointers and cuabi_go_load, which opens
//	             libcuabi with dlopen and fills the table
//
// It is run by `go generate` (see the directive in saxpy.go):
//
//	go run ./gen [-json PATH] [-o DIR]
//
// Without -json it reads $CUABI_JSON, else the first of
// ../../include/cuabi/cuabi.json (this source tree),
// /usr/local/include/cuabi/cuabi.json and /usr/include/cuabi/cuabi.json.
//
// Handles are declared uintptr_t, not pointers: the description says a handle
// is a 64-bit encoded value, not an address, and a Go pointer type holding one
// could be mistaken by the garbage collector for a pointer into its heap. The
// calling convention is the same (both are 64-bit integer-class values). Enums
// are int32_t and flag sets their own width, as the description's conventions
// state; a description that states other conventions is refused.
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

type cType struct {
	C        string `json:"c"`
	Base     string `json:"base"`
	Kind     string `json:"kind"`
	Const    bool   `json:"const"`
	Pointers []struct {
		Const bool `json:"const"`
	} `json:"pointers"`
}

type param struct {
	Name string `json:"name"`
	Type cType  `json:"type"`
	Doc  string `json:"doc"`
}

type function struct {
	Name    string  `json:"name"`
	Returns cType   `json:"returns"`
	Params  []param `json:"params"`
	Doc     string  `json:"doc"`
}

type description struct {
	Name    string            `json:"name"`
	Library map[string]string `json:"library"`
	Version struct {
		Major  int    `json:"major"`
		Minor  int    `json:"minor"`
		Patch  int    `json:"patch"`
		String string `json:"string"`
	} `json:"version"`
	Conventions struct {
		StatusType    string `json:"status_type"`
		Success       string `json:"success"`
		EnumWidthBits int    `json:"enum_width_bits"`
	} `json:"conventions"`
	Constants []struct {
		Name  string          `json:"name"`
		Value json.RawMessage `json:"value"`
		Type  string          `json:"type"`
		Doc   string          `json:"doc"`
	} `json:"constants"`
	Handles []struct {
		Name string `json:"name"`
		Doc  string `json:"doc"`
	} `json:"handles"`
	Callbacks []function `json:"callbacks"`
	Enums     []struct {
		Name   string `json:"name"`
		Doc    string `json:"doc"`
		Values []struct {
			Name  string `json:"name"`
			Value int64  `json:"value"`
			Doc   string `json:"doc"`
		} `json:"values"`
	} `json:"enums"`
	Flags []struct {
		Name string `json:"name"`
		Type string `json:"type"`
		Doc  string `json:"doc"`
	} `json:"flags"`
	Structs []struct {
		Name   string  `json:"name"`
		Doc    string  `json:"doc"`
		Fields []param `json:"fields"`
	} `json:"structs"`
	Functions []function `json:"functions"`
}

// The C types a description may use without declaring them.
var builtin = map[string]bool{
	"void": true, "char": true, "float": true, "double": true, "size_t": true,
	"int8_t": true, "int16_t": true, "int32_t": true, "int64_t": true,
	"uint8_t": true, "uint16_t": true, "uint32_t": true, "uint64_t": true,
}

func main() {
	jsonPath := flag.String("json", "", "cuabi.json to read (default: $CUABI_JSON, the source tree's, the installed one)")
	outDir := flag.String("o", ".", "folder to write cuabi_gen.h and cuabi_gen.c into")
	flag.Parse()
	path, err := findDescription(*jsonPath)
	if err == nil {
		err = generate(path, *outDir)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "gen:", err)
		os.Exit(1)
	}
}

func findDescription(given string) (string, error) {
	if given != "" {
		return given, nil
	}
	if env := os.Getenv("CUABI_JSON"); env != "" {
		return env, nil
	}
	tried := []string{
		filepath.Join("..", "..", "include", "cuabi", "cuabi.json"),
		"/usr/local/include/cuabi/cuabi.json",
		"/usr/include/cuabi/cuabi.json",
	}
	for _, p := range tried {
		if _, err := os.Stat(p); err == nil {
			return p, nil
		}
	}
	return "", fmt.Errorf("no cuabi.json found (tried %s); pass -json PATH or set CUABI_JSON",
		strings.Join(tried, ", "))
}

func generate(path, outDir string) error {
	raw, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	var d description
	if err := json.Unmarshal(raw, &d); err != nil {
		return fmt.Errorf("%s: %v", path, err)
	}
	if d.Conventions.EnumWidthBits != 32 {
		return fmt.Errorf("%s: enums %d bits wide; this generator knows 32", path, d.Conventions.EnumWidthBits)
	}
	if len(d.Functions) == 0 || d.Library["linux"] == "" {
		return fmt.Errorf("%s: no functions, or no Linux library name", path)
	}
	g := &generator{desc: &d, known: map[string]string{}}
	for name := range builtin {
		g.known[name] = "builtin"
	}
	h, err := g.header(filepath.Base(path))
	if err != nil {
		return fmt.Errorf("%s: %v", path, err)
	}
	c := g.source()
	if err := writeFile(filepath.Join(outDir, "cuabi_gen.h"), h); err != nil {
		return err
	}
	return writeFile(filepath.Join(outDir, "cuabi_gen.c"), c)
}

// writeFile replaces a file only when its content changes, so that the Go
// build cache keeps what it compiled from an unchanged description.
func writeFile(path, content string) error {
	if old, err := os.ReadFile(path); err == nil && string(old) == content {
		return nil
	}
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, []byte(content), 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}

type generator struct {
	desc  *description
	known map[string]string // C type name -> what declared it
}

// declare records a type name; a second declaration is an error.
func (g *generator) declare(name, what string) error {
	if prev, ok := g.known[name]; ok {
		return fmt.Errorf("%s declared twice (%s, %s)", name, prev, what)
	}
	g.known[name] = what
	return nil
}

// use checks that a type is declared before it is used, and returns its C
// spelling with a name after it.
func (g *generator) use(t cType, name, where string) (string, error) {
	if _, ok := g.known[t.Base]; !ok {
		return "", fmt.Errorf("%s: type %q (kind %s) is not declared", where, t.Base, t.Kind)
	}
	if t.C == "" {
		return "", fmt.Errorf("%s: type without a C spelling", where)
	}
	if name == "" {
		return t.C, nil
	}
	return t.C + " " + name, nil
}

func (g *generator) signature(f function) (ret string, params string, args string, err error) {
	if ret, err = g.use(f.Returns, "", f.Name+" returns"); err != nil {
		return
	}
	var ps, as []string
	for i, p := range f.Params {
		name := p.Name
		if name == "" {
			name = fmt.Sprintf("arg%d", i)
		}
		var s string
		if s, err = g.use(p.Type, name, f.Name+"("+name+")"); err != nil {
			return
		}
		ps = append(ps, s)
		as = append(as, name)
	}
	if len(ps) == 0 {
		ps = []string{"void"}
	}
	return ret, strings.Join(ps, ", "), strings.Join(as, ", "), nil
}

func comment(b *strings.Builder, indent, doc string) {
	doc = strings.TrimSpace(strings.ReplaceAll(doc, "*/", "* /"))
	if doc == "" {
		return
	}
	for _, line := range strings.Split(doc, "\n") {
		fmt.Fprintf(b, "%s/* %s */\n", indent, strings.TrimRight(line, " "))
	}
}

// cString quotes s as a C string literal.
func cString(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, c := range []byte(s) {
		switch {
		case c == '"' || c == '\\':
			b.WriteByte('\\')
			b.WriteByte(c)
		case c < 0x20 || c >= 0x7f:
			fmt.Fprintf(&b, "\\%03o", c)
		default:
			b.WriteByte(c)
		}
	}
	b.WriteByte('"')
	return b.String()
}

func (g *generator) header(source string) (string, error) {
	d := g.desc
	var b strings.Builder
	fmt.Fprintf(&b, "/* Generated by examples/go/gen from %s (%s %s). Do not edit: run go generate. */\n",
		source, d.Name, d.Version.String)
	b.WriteString(`#ifndef CUABI_GEN_H
#define CUABI_GEN_H

#include <stddef.h>
#include <stdint.h>

`)
	fmt.Fprintf(&b, "/* The library to dlopen, as the description names it. */\n#define CUABI_GO_LIBRARY %s\n",
		cString(d.Library["linux"]))
	fmt.Fprintf(&b, "/* The version of the description these declarations come from. */\n")
	fmt.Fprintf(&b, "#define CUABI_GO_DESCRIPTION_MAJOR %d\n#define CUABI_GO_DESCRIPTION_MINOR %d\n",
		d.Version.Major, d.Version.Minor)
	fmt.Fprintf(&b, "#define CUABI_GO_DESCRIPTION_VERSION %s\n\n", cString(d.Version.String))

	b.WriteString("/* Handles: 64-bit encoded values, not addresses. */\n")
	for _, h := range d.Handles {
		if err := g.declare(h.Name, "handle"); err != nil {
			return "", err
		}
		comment(&b, "", h.Doc)
		fmt.Fprintf(&b, "typedef uintptr_t %s;\n", h.Name)
	}

	b.WriteString("\n/* Enums: 32 bits wide, values below as constants. */\n")
	for _, e := range d.Enums {
		if err := g.declare(e.Name, "enum"); err != nil {
			return "", err
		}
		comment(&b, "", e.Doc)
		fmt.Fprintf(&b, "typedef int32_t %s;\n", e.Name)
		for _, v := range e.Values {
			comment(&b, "  ", v.Doc)
			fmt.Fprintf(&b, "#define %s ((%s)%d)\n", v.Name, e.Name, v.Value)
		}
	}

	b.WriteString("\n/* Flag sets. */\n")
	for _, f := range d.Flags {
		if !builtin[f.Type] {
			return "", fmt.Errorf("flag set %s: type %q", f.Name, f.Type)
		}
		if err := g.declare(f.Name, "flags"); err != nil {
			return "", err
		}
		comment(&b, "", f.Doc)
		fmt.Fprintf(&b, "typedef %s %s;\n", f.Type, f.Name)
	}

	b.WriteString("\n/* Constants. */\n")
	for _, c := range d.Constants {
		comment(&b, "", c.Doc)
		switch c.Type {
		case "string":
			var s string
			if err := json.Unmarshal(c.Value, &s); err != nil {
				return "", fmt.Errorf("constant %s: %v", c.Name, err)
			}
			fmt.Fprintf(&b, "#define %s %s\n", c.Name, cString(s))
		case "int":
			var v int64
			if err := json.Unmarshal(c.Value, &v); err != nil {
				return "", fmt.Errorf("constant %s: %v", c.Name, err)
			}
			fmt.Fprintf(&b, "#define %s (%d)\n", c.Name, v)
		default:
			return "", fmt.Errorf("constant %s: type %q", c.Name, c.Type)
		}
	}

	// Structs are named before the callbacks, which may take pointers to them.
	b.WriteString("\n/* Structs, declared here and defined below. */\n")
	for _, s := range d.Structs {
		if err := g.declare(s.Name, "struct"); err != nil {
			return "", err
		}
		fmt.Fprintf(&b, "typedef struct %s %s;\n", s.Name, s.Name)
	}

	b.WriteString("\n/* Callbacks. */\n")
	for _, cb := range d.Callbacks {
		ret, params, _, err := g.signature(cb)
		if err != nil {
			return "", err
		}
		if err := g.declare(cb.Name, "callback"); err != nil {
			return "", err
		}
		comment(&b, "", cb.Doc)
		fmt.Fprintf(&b, "typedef %s (*%s)(%s);\n", ret, cb.Name, params)
	}

	b.WriteString("\n/* Structs, field for field: the C compiler lays them out as the library's. */\n")
	for _, s := range d.Structs {
		comment(&b, "", s.Doc)
		fmt.Fprintf(&b, "struct %s {\n", s.Name)
		for _, f := range s.Fields {
			decl, err := g.use(f.Type, f.Name, s.Name+"."+f.Name)
			if err != nil {
				return "", err
			}
			comment(&b, "  ", f.Doc)
			fmt.Fprintf(&b, "  %s;\n", decl)
		}
		b.WriteString("};\n")
	}

	b.WriteString("\n/* One pointer per function, filled by cuabi_go_load. */\nstruct cuabi_go_table {\n")
	for _, f := range d.Functions {
		ret, params, _, err := g.signature(f)
		if err != nil {
			return "", err
		}
		fmt.Fprintf(&b, "  %s (*%s)(%s);\n", ret, f.Name, params)
	}
	b.WriteString("};\nextern struct cuabi_go_table cuabi_go_fn;\n\n")
	b.WriteString(`/* Opens the library at path (a file name is searched for as dlopen does) and
 * finds every function above. 0 on success; otherwise a message in msg:
 * dlerror's, or the functions the library lacks. */
int cuabi_go_load(const char* path, char* msg, size_t msg_size);
/* The file the library was loaded from (after cuabi_go_load), or "". */
const char* cuabi_go_library_file(void);

/* The API: each function calls the library's through the table. */
`)
	for _, f := range d.Functions {
		ret, params, args, err := g.signature(f)
		if err != nil {
			return "", err
		}
		comment(&b, "", f.Doc)
		fmt.Fprintf(&b, "static inline %s %s(%s) {\n", ret, f.Name, params)
		if f.Returns.C == "void" {
			fmt.Fprintf(&b, "  cuabi_go_fn.%s(%s);\n}\n", f.Name, args)
		} else {
			fmt.Fprintf(&b, "  return cuabi_go_fn.%s(%s);\n}\n", f.Name, args)
		}
	}
	b.WriteString("\n#endif\n")
	return b.String(), nil
}

func (g *generator) source() string {
	d := g.desc
	var b strings.Builder
	fmt.Fprintf(&b, "/* Generated by examples/go/gen from cuabi.json (%s %s). Do not edit: run go generate. */\n",
		d.Name, d.Version.String)
	b.WriteString(`#define _GNU_SOURCE
#include "cuabi_gen.h"

#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

struct cuabi_go_table cuabi_go_fn;
static char cuabi_go_file[4096];

int cuabi_go_load(const char* path, char* msg, size_t msg_size) {
  void* lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (lib == NULL) {
    const char* why = dlerror();
    snprintf(msg, msg_size, "%s", why ? why : "dlopen failed");
    return 1;
  }
  size_t missing = 0;
  size_t used = (size_t)snprintf(msg, msg_size,
                                "%s lacks functions that cuabi.json " CUABI_GO_DESCRIPTION_VERSION
                                " describes (an older library?):", path);
#define CUABI_GO_FIND(name)                                                  \
  do {                                                                       \
    *(void**)(&cuabi_go_fn.name) = dlsym(lib, #name);                        \
    if (cuabi_go_fn.name == NULL) {                                          \
      ++missing;                                                             \
      if (used < msg_size)                                                   \
        used += (size_t)snprintf(msg + used, msg_size - used, " %s", #name); \
    }                                                                        \
  } while (0)
`)
	names := make([]string, 0, len(d.Functions))
	for _, f := range d.Functions {
		names = append(names, f.Name)
	}
	sort.Strings(names)
	for _, n := range names {
		fmt.Fprintf(&b, "  CUABI_GO_FIND(%s);\n", n)
	}
	b.WriteString(`#undef CUABI_GO_FIND
  if (missing != 0) {
    memset(&cuabi_go_fn, 0, sizeof cuabi_go_fn);
    dlclose(lib);
    return 1;
  }
  Dl_info info;
  if (dladdr(*(void**)(&cuabi_go_fn.cuabi_version), &info) != 0 && info.dli_fname != NULL)
    snprintf(cuabi_go_file, sizeof cuabi_go_file, "%s", info.dli_fname);
  msg[0] = '\0';
  return 0;
}

const char* cuabi_go_library_file(void) { return cuabi_go_file; }
`)
	return b.String()
}
