/*
 * What the stand-in driver (fake_cuda.c) and its NVRTC (fake_nvrtc.c) share:
 * the gate every entry point passes, which counts the call and fails it when
 * told to. Internal to the stand-in's library; not a header for its users
 * (they find the controls with dlsym, see fake_cuda.c).
 */
#ifndef CUABI_TESTS_FAKE_FAKE_CUDA_H
#define CUABI_TESTS_FAKE_FAKE_CUDA_H

#define EXPORT __attribute__((visibility("default")))
#define HIDDEN __attribute__((visibility("hidden")))

/* Set by the first fault control a test calls (fake_reset, fake_fail_call,
 * fake_fail_entry). Until then no call is counted or failed, and the gate
 * costs one load and one branch: the benchmarks' instruction counts run on
 * this library and never arm it. */
extern HIDDEN int fake_armed;

/* Counts a call of the entry point `fn` (without cuda.h's _v2 and the like)
 * unless another entry point made it; answers the error to fail it with, or
 * 0. */
HIDDEN int fake_gate(const char* fn);
#define FAKE_GATE(fn) (__builtin_expect(fake_armed, 0) ? fake_gate(fn) : 0)

/* > 0 while an entry point runs for another one (INNER) or for itself after
 * its gate: such a call is not counted. Initial-exec, so that reading it
 * calls nothing. */
extern HIDDEN __thread int fake_nested __attribute__((tls_model("initial-exec")));

/* The gate at the top of the entry point `fn` called with `args`. Armed, it
 * counts the call, returns the injected error if any, and otherwise runs the
 * entry point again as an inner call. Unarmed, it costs one load and one
 * branch, and the entry point keeps its registers, since the gated path never
 * rejoins it: the benchmarks' instruction counts run through here. */
#define FAULT(fn, args)                                    \
  do {                                                     \
    if (__builtin_expect(fake_armed, 0) && !fake_nested) { \
      int f_ = fake_gate(#fn);                             \
      if (f_) return f_;                                   \
      ++fake_nested;                                       \
      __typeof__(fn args) r_ = fn args;                    \
      --fake_nested;                                       \
      return r_;                                           \
    }                                                      \
  } while (0)

/* An entry point on the benchmarks' counted paths, written
 *   HOT_ENTRY(fn, (parameters), (arguments)) { body }
 * FAULT at the top of a body makes the compiler keep the arguments for the
 * gate's call, which costs the unarmed path a few instructions more; here
 * the gate is a function of its own, reached by a tail call, and the body is
 * inlined into the entry point as if there were no gate. */
#define HOT_ENTRY(fn, params, args)                                       \
  static inline __attribute__((always_inline)) CUresult body_##fn params; \
  static __attribute__((noinline, cold)) CUresult gated_##fn params {     \
    if (!fake_nested) {                                                   \
      int f_ = fake_gate(#fn);                                            \
      if (f_) return f_;                                                  \
    }                                                                     \
    ++fake_nested;                                                        \
    CUresult r_ = body_##fn args;                                         \
    --fake_nested;                                                        \
    return r_;                                                            \
  }                                                                       \
  EXPORT CUresult CUDAAPI fn params {                                     \
    if (__builtin_expect(fake_armed, 0)) return gated_##fn args;          \
    return body_##fn args;                                                \
  }                                                                       \
  static inline __attribute__((always_inline)) CUresult body_##fn params

/* An entry point calling another one: the inner call is not counted. */
#define INNER(e)               \
  ({                           \
    int armed_ = fake_armed;   \
    if (armed_) ++fake_nested; \
    __typeof__(e) r_ = (e);    \
    if (armed_) --fake_nested; \
    r_;                        \
  })

/* Resources handed out and not yet taken back (contexts retained, modules,
 * allocations, streams, events, graphs, graph execs, libraries, programs). */
extern HIDDEN long fake_live;

#endif /* CUABI_TESTS_FAKE_FAKE_CUDA_H */
