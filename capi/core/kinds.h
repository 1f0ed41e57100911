/* The kinds of object behind the C API's handles, listed once.
 *
 * X(Name, name) for each handle type cuabi_<name> of include/cuabi/cuabi.h.
 * A kind's number is its place here, from 1 (handle values carry it, see
 * handles.hpp): a new kind goes at the end, wherever the header puts it.
 * Everything that lists the kinds is made from this macro: the core's Kind
 * and kind names, the shims' handle-to-object lookup, the C tests' handle
 * tables and the handle fuzzer. tests/c/handles_test.cc fails when a handle
 * type of the header (or of cuabi.json) is missing here.
 *
 * Plain preprocessor text, for C and C++ alike; it includes nothing. */
#ifndef CUABI_CORE_KINDS_H
#define CUABI_CORE_KINDS_H

#define CUABI_HANDLE_KINDS(X) \
  X(Device, device)           \
  X(Program, program)         \
  X(Module, module)           \
  X(Function, function)       \
  X(Buffer, buffer)           \
  X(HostBuffer, host_buffer)  \
  X(Stream, stream)           \
  X(Event, event)             \
  X(Graph, graph)             \
  X(GraphExec, graph_exec)    \
  X(LaunchPlan, launch_plan)  \
  X(MemoryPool, memory_pool)  \
  X(Array, array)             \
  X(Texture, texture)         \
  X(Surface, surface)         \
  X(Linker, linker)           \
  X(Library, library)         \
  X(SmResource, sm_resource)  \
  X(GreenContext, green_context) \
  X(TensorMap, tensor_map)     \
  X(PhysicalMemory, physical_memory) \
  X(AddressRange, address_range) \
  X(GraphNode, graph_node)

#endif /* CUABI_CORE_KINDS_H */
