// SAXPY through cuabi from Go, with no binding: the declarations are
// generated from cuabi.json (go generate runs ./gen, which writes
// cuabi_gen.h and cuabi_gen.c), and libcuabi.so.0 is opened with dlopen at
// run time, so the program has no link-time dependency on it.
//
// The flow is that of examples/c/saxpy.c: compile the kernel with NVRTC
// (cuabi_module_compile, for the device's own architecture), allocate, copy
// in on a stream, launch with each argument's size checked
// (cuabi_function_launch_sized), copy back, synchronise, verify. Before the
// launch it passes a 4-byte n for the kernel's size_t parameter and checks
// that cuabi refuses it, naming the parameter.
//
// $CUABI_LIBRARY names the library to load; by default the name the
// description gives (libcuabi.so.0), searched for as dlopen does.
//
// Exit status:
//
//	0  the result was verified
//	1  a call failed, or the result or the refusal was wrong
//	2  libcuabi could not be loaded, or is of another major version
//	3  no CUDA driver (CUABI_ERROR_DRIVER_NOT_FOUND or CUABI_ERROR_STUB_DRIVER);
//	   the kernel is still compiled, to PTX, to show NVRTC works without one
//	4  a driver but no CUDA device (likewise)
package main

//go:generate go run ./gen

/*
#cgo LDFLAGS: -ldl
#include <stdlib.h>
#include "cuabi_gen.h"
*/
import "C"

import (
	"fmt"
	"math"
	"math/rand"
	"os"
	"runtime"
	"strings"
	"unsafe"
)

const saxpySource = `extern "C" __global__
void saxpy(float a, float *x, float *y, float *out, size_t n)
{
 size_t tid = blockIdx.x * blockDim.x + threadIdx.x;
 if (tid < n) {
   out[tid] = a * x[tid] + y[tid];
 }
}
`

const (
	numThreads = 512   // threads per block
	numBlocks  = 32768 // blocks per grid

	exitFailed   = 1
	exitLibrary  = 2
	exitNoDriver = 3
	exitNoDevice = 4
)

func lastError() string { return C.GoString(C.cuabi_last_error_message()) }

func statusName(st C.cuabi_status) string { return C.GoString(C.cuabi_status_get_name(st)) }

// indent puts two spaces before every line of a multi-line message.
func indent(s string) string { return "  " + strings.ReplaceAll(s, "\n", "\n  ") }

func fail(format string, args ...interface{}) {
	fmt.Fprintf(os.Stderr, "saxpy-go: "+format+"\n", args...)
	os.Exit(exitFailed)
}

// check leaves with the status's name and the core's message when a call failed.
func check(call string, st C.cuabi_status) {
	if st != C.CUABI_SUCCESS {
		fail("%s failed: %s\n%s", call, statusName(st), indent(lastError()))
	}
}

// cMalloc allocates C memory, which cuabi may hold and read after a call
// returns (asynchronous copies), as Go memory may not be.
func cMalloc(bytes uintptr) unsafe.Pointer {
	p := C.malloc(C.size_t(bytes))
	if p == nil {
		fail("out of host memory (%d bytes)", bytes)
	}
	return p
}

// cStrings makes a C array of C strings; free it with freeCStrings.
func cStrings(ss []string) **C.char {
	arr := (**C.char)(cMalloc(uintptr(len(ss)) * unsafe.Sizeof((*C.char)(nil))))
	elems := unsafe.Slice(arr, len(ss))
	for i, s := range ss {
		elems[i] = C.CString(s)
	}
	return arr
}

func freeCStrings(arr **C.char, n int) {
	for _, s := range unsafe.Slice(arr, n) {
		C.free(unsafe.Pointer(s))
	}
	C.free(unsafe.Pointer(arr))
}

// twoCall reads a string through the two-call pattern: ask the size, then fill.
func twoCall(call string, get func(buf *C.char, size *C.size_t) C.cuabi_status) string {
	var size C.size_t
	check(call, get(nil, &size))
	buf := (*C.char)(cMalloc(uintptr(size)))
	defer C.free(unsafe.Pointer(buf))
	check(call, get(buf, &size))
	return C.GoString(buf)
}

func loadLibrary() {
	path := os.Getenv("CUABI_LIBRARY")
	if path == "" {
		path = C.CUABI_GO_LIBRARY
	}
	cpath := C.CString(path)
	defer C.free(unsafe.Pointer(cpath))
	const msgSize = 16384
	msg := (*C.char)(cMalloc(msgSize))
	defer C.free(unsafe.Pointer(msg))
	if C.cuabi_go_load(cpath, msg, msgSize) != 0 {
		fmt.Fprintf(os.Stderr, "saxpy-go: cannot load libcuabi (%s):\n%s\n", path, indent(C.GoString(msg)))
		os.Exit(exitLibrary)
	}
	version := uint32(C.cuabi_version())
	if major := version / 10000; major != C.CUABI_GO_DESCRIPTION_MAJOR {
		fmt.Fprintf(os.Stderr, "saxpy-go: %s is libcuabi %s, major version %d; the declarations describe %s\n",
			C.GoString(C.cuabi_go_library_file()), C.GoString(C.cuabi_version_string()), major,
			C.CUABI_GO_DESCRIPTION_VERSION)
		os.Exit(exitLibrary)
	}
	fmt.Printf("libcuabi %s from %s (declarations from cuabi.json %s)\n",
		C.GoString(C.cuabi_version_string()), C.GoString(C.cuabi_go_library_file()),
		C.CUABI_GO_DESCRIPTION_VERSION)
}

// compilePTX compiles the kernel to PTX with the program API, which needs
// NVRTC but no driver, and checks that the PTX defines the kernel.
func compilePTX() {
	source := C.CString(saxpySource)
	defer C.free(unsafe.Pointer(source))
	name := C.CString("saxpy.cu")
	defer C.free(unsafe.Pointer(name))
	var prog C.cuabi_program
	check("cuabi_program_create", C.cuabi_program_create(source, name, 0, nil, nil, &prog))
	defer C.cuabi_program_release(prog)
	options := []string{"--fmad=false", "--gpu-architecture=compute_75"}
	opts := cStrings(options)
	defer freeCStrings(opts, len(options))
	if st := C.cuabi_program_compile(prog, C.size_t(len(options)), opts); st != C.CUABI_SUCCESS {
		message := lastError()
		log := twoCall("cuabi_program_get_log", func(buf *C.char, size *C.size_t) C.cuabi_status {
			return C.cuabi_program_get_log(prog, buf, size)
		})
		fail("cuabi_program_compile failed: %s\n%s\n%s", statusName(st), indent(message), indent(log))
	}
	ptx := twoCall("cuabi_program_get_ptx", func(buf *C.char, size *C.size_t) C.cuabi_status {
		return C.cuabi_program_get_ptx(prog, buf, size)
	})
	if !strings.Contains(ptx, ".entry saxpy(") {
		fail("the PTX (%d bytes) does not define the kernel saxpy", len(ptx))
	}
	fmt.Printf("compiled saxpy with NVRTC: %d bytes of PTX (compute_75), no driver needed\n", len(ptx))
}

// noDevice reports why there is no device to run on and leaves.
func noDevice(st C.cuabi_status, count C.int32_t) {
	var report string
	code := exitNoDevice
	if st == C.CUABI_SUCCESS {
		report = fmt.Sprintf("no CUDA device: the driver reports %d devices", int32(count))
	} else {
		report = fmt.Sprintf("no CUDA device: %s\n%s", statusName(st), indent(lastError()))
		switch st {
		case C.CUABI_ERROR_DRIVER_NOT_FOUND, C.CUABI_ERROR_STUB_DRIVER:
			report = fmt.Sprintf("no CUDA driver: %s\n%s", statusName(st), indent(lastError()))
			code = exitNoDriver
		case C.CUABI_ERROR_NO_DEVICE:
		default:
			fail("cuabi_device_get_count failed: %s\n%s", statusName(st), indent(lastError()))
		}
	}
	compilePTX()
	fmt.Fprintf(os.Stderr, "saxpy-go: %s\n", report)
	os.Exit(code)
}

// cuabi's last error belongs to the OS thread that made the failing call;
// goroutines may move between threads between two cgo calls, so the main
// goroutine stays on one thread for the whole program.
func init() { runtime.LockOSThread() }

func main() {
	loadLibrary()

	var count C.int32_t
	if st := C.cuabi_device_get_count(&count); st != C.CUABI_SUCCESS || count == 0 {
		noDevice(st, count)
	}

	var device C.cuabi_device
	check("cuabi_device_get", C.cuabi_device_get(0, &device))
	defer C.cuabi_device_release(device)
	name := twoCall("cuabi_device_get_name", func(buf *C.char, size *C.size_t) C.cuabi_status {
		return C.cuabi_device_get_name(device, buf, size)
	})
	var major, minor C.int32_t
	check("cuabi_device_get_compute_capability",
		C.cuabi_device_get_compute_capability(device, &major, &minor))
	fmt.Printf("device 0: %s (sm_%d%d)\n", name, int32(major), int32(minor))

	// Source to a loaded module in one call, for the device's own sm_XY.
	var desc C.cuabi_compile_desc
	check("cuabi_compile_desc_init", C.cuabi_compile_desc_init(&desc, C.sizeof_cuabi_compile_desc))
	desc.source = C.CString(saxpySource)
	defer C.free(unsafe.Pointer(desc.source))
	desc.name = C.CString("saxpy.cu")
	defer C.free(unsafe.Pointer(desc.name))
	options := []string{"--fmad=false"}
	desc.options = cStrings(options)
	defer freeCStrings(desc.options, len(options))
	desc.num_options = C.size_t(len(options))
	var module C.cuabi_module
	if st := C.cuabi_module_compile(device, &desc, &module); st != C.CUABI_SUCCESS {
		message := lastError()
		if st == C.CUABI_ERROR_COMPILE {
			message += "\n" + twoCall("cuabi_last_error_log", func(buf *C.char, size *C.size_t) C.cuabi_status {
				return C.cuabi_last_error_log(buf, size)
			})
		}
		fail("cuabi_module_compile failed: %s\n%s", statusName(st), indent(message))
	}
	defer C.cuabi_module_release(module)
	kernelName := C.CString("saxpy")
	defer C.free(unsafe.Pointer(kernelName))
	var kernel C.cuabi_function
	check("cuabi_module_get_function", C.cuabi_module_get_function(module, kernelName, &kernel))
	defer C.cuabi_function_release(kernel)

	// Host data, in C memory: the copies are asynchronous.
	const n = numThreads * numBlocks
	const bytes = n * 4
	a := float32(2.0)
	hostX, hostY, hostOut := cMalloc(bytes), cMalloc(bytes), cMalloc(bytes)
	defer C.free(hostX)
	defer C.free(hostY)
	defer C.free(hostOut)
	x := unsafe.Slice((*float32)(hostX), n)
	y := unsafe.Slice((*float32)(hostY), n)
	out := unsafe.Slice((*float32)(hostOut), n)
	rng := rand.New(rand.NewSource(1234))
	for i := range x {
		x[i] = rng.Float32()
		y[i] = rng.Float32()
		out[i] = float32(math.NaN())
	}

	var dX, dY, dOut C.cuabi_buffer
	check("cuabi_buffer_alloc", C.cuabi_buffer_alloc(device, bytes, &dX))
	defer C.cuabi_buffer_release(dX)
	check("cuabi_buffer_alloc", C.cuabi_buffer_alloc(device, bytes, &dY))
	defer C.cuabi_buffer_release(dY)
	check("cuabi_buffer_alloc", C.cuabi_buffer_alloc(device, bytes, &dOut))
	defer C.cuabi_buffer_release(dOut)
	var stream C.cuabi_stream
	check("cuabi_stream_create", C.cuabi_stream_create(device, 0, 0, &stream))
	defer C.cuabi_stream_release(stream)
	check("cuabi_buffer_copy_from_host_async", C.cuabi_buffer_copy_from_host_async(dX, 0, hostX, bytes, stream))
	check("cuabi_buffer_copy_from_host_async", C.cuabi_buffer_copy_from_host_async(dY, 0, hostY, bytes, stream))
	// out starts as NaN on the device too: an element the kernel skips stays wrong.
	check("cuabi_buffer_copy_from_host_async", C.cuabi_buffer_copy_from_host_async(dOut, 0, hostOut, bytes, stream))

	// The arguments' values and the parameter array, in C memory: C may not
	// be given Go memory that holds pointers to Go memory.
	var pX, pY, pOut C.uint64_t
	check("cuabi_buffer_get_pointer", C.cuabi_buffer_get_pointer(dX, &pX))
	check("cuabi_buffer_get_pointer", C.cuabi_buffer_get_pointer(dY, &pY))
	check("cuabi_buffer_get_pointer", C.cuabi_buffer_get_pointer(dOut, &pOut))
	values := cMalloc(48)
	defer C.free(values)
	*(*float32)(values) = a
	*(*uint64)(unsafe.Add(values, 8)) = uint64(pX)
	*(*uint64)(unsafe.Add(values, 16)) = uint64(pY)
	*(*uint64)(unsafe.Add(values, 24)) = uint64(pOut)
	*(*uint64)(unsafe.Add(values, 32)) = n // size_t n: 8 bytes
	*(*uint32)(unsafe.Add(values, 40)) = n // the overview's 4-byte n
	const ptrSize = unsafe.Sizeof(uintptr(0))
	params := unsafe.Slice((*unsafe.Pointer)(cMalloc(5*ptrSize)), 5)
	defer C.free(unsafe.Pointer(&params[0]))
	sizes := unsafe.Slice((*C.size_t)(cMalloc(5*8)), 5)
	defer C.free(unsafe.Pointer(&sizes[0]))
	for i, offset := range []uintptr{0, 8, 16, 24} {
		params[i] = unsafe.Add(values, offset)
		sizes[i] = 8
	}
	sizes[0] = 4

	var config C.cuabi_launch_config
	check("cuabi_launch_config_init", C.cuabi_launch_config_init(&config, C.sizeof_cuabi_launch_config))
	config.grid_x = numBlocks
	config.block_x = numThreads

	// The overview passes n as a 4-byte integer to the size_t parameter:
	// cuabi must refuse it, naming the parameter, and launch nothing.
	params[4], sizes[4] = unsafe.Add(values, 40), 4
	st := C.cuabi_function_launch_sized(kernel, &config, stream, &params[0], &sizes[0], 5)
	message := lastError()
	if st != C.CUABI_ERROR_INVALID_ARGUMENT {
		fail("a 4-byte n for the size_t parameter was not refused: %s", statusName(st))
	}
	if got := C.cuabi_last_error_status(); got != st {
		fail("cuabi_last_error_status is %s after a call that returned %s", statusName(got), statusName(st))
	}
	if !strings.Contains(message, "parameter 4") {
		fail("the refusal does not name parameter 4: %q", message)
	}
	fmt.Printf("refused as it should be: %s: %s\n", statusName(st), message)

	params[4], sizes[4] = unsafe.Add(values, 32), 8
	check("cuabi_function_launch_sized",
		C.cuabi_function_launch_sized(kernel, &config, stream, &params[0], &sizes[0], 5))
	check("cuabi_buffer_copy_to_host_async", C.cuabi_buffer_copy_to_host_async(dOut, 0, hostOut, bytes, stream))
	check("cuabi_stream_synchronize", C.cuabi_stream_synchronize(stream))

	// Verify every element against the host's own computation.
	bad, first := 0, -1
	maxError := 0.0
	for i := range out {
		want := float64(a)*float64(x[i]) + float64(y[i])
		err := math.Abs(float64(out[i]) - want)
		if !(err <= 1e-5*(1+math.Abs(want))) { // NaN counts as wrong
			if first < 0 {
				first = i
			}
			bad++
			continue
		}
		maxError = math.Max(maxError, err)
	}
	fmt.Printf("saxpy: n = %d, %d blocks x %d threads\n", n, numBlocks, numThreads)
	if bad != 0 {
		fail("FAILED: %d of %d elements wrong; out[%d] = %g, want %g", bad, n, first, out[first],
			float64(a)*float64(x[first])+float64(y[first]))
	}
	fmt.Printf("verified: out = %g * x + y for all %d elements (max abs error %.3g)\n", a, n, maxError)
}
