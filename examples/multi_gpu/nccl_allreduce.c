/*
 * nccl_allreduce: one process per GPU, NCCL all-reduce on cuabi memory and
 * streams, a cuabi kernel on the result, and fault containment.
 *
 * The program started by the user is the launcher. It touches no GPU memory
 * and no NCCL communicator: it counts the devices, checks that NCCL loads,
 * starts one rank per GPU (posix_spawn of this same program with --rank R,
 * never fork) and watches them with a deadline. Rank 0 makes the NCCL unique
 * id and writes it to a pipe (its descriptor 3); the launcher passes it on
 * to every other rank through that rank's standard input, which then stays
 * open as the launcher's control channel (a 4-byte rank number: "this rank
 * failed").
 *
 * Each rank: cuabi device = its rank; a cuabi buffer filled by a cuabi
 * kernel (compiled at run time) with (rank + 1) * (i % 251); ncclAllReduce
 * (sum, float32, in place) on the buffer's raw device pointer and the cuabi
 * stream's raw CUstream; a cuabi kernel scaling the sum by 1 / nranks; the
 * result checked on the host against n (n + 1) / 2 * (i % 251) / n. Then
 * 20 timed all-reduces after 5 warm-ups; rank 0 prints the algorithm
 * bandwidth (bytes / time) and the bus bandwidth (algbw * 2 (n - 1) / n),
 * as nccl-tests defines them for all-reduce.
 *
 * Every wait on a stream is a loop over cuabi_stream_query that also polls
 * ncclCommGetAsyncError, the control channel and a deadline: on an NCCL
 * error, a failed peer or the deadline the rank calls ncclCommAbort and
 * exits with 4 (peer failed) or 5 (deadline). It never blocks in a
 * synchronize.
 *
 *   nccl_allreduce [--ranks N] [--mib M] [--iters I] [--warmup W]
 *                  [--timeout S] [--deadline S] [--fault-rank K]
 *                  [--fault-kind address|exit] [--sweep]
 *
 *   --ranks N       ranks (default: one per device; at most the device
 *                   count, as NCCL takes one GPU per rank). --ranks 1 runs
 *                   the whole flow on one GPU (a test; bus bandwidth 0).
 *   --mib M         buffer size (default 256 MiB)
 *   --iters I       timed iterations (default 20), --warmup W (default 5)
 *   --timeout S     a rank's wait for one step (default 60 s)
 *   --deadline S    the launcher's wait for every rank (default 300 s)
 *   --fault-rank K  rank K fails right after the communicator is made:
 *                   --fault-kind address (default) launches a kernel that
 *                   writes to an illegal address; exit ends the process with
 *                   abort(). The other ranks must notice, abort their
 *                   communicator and exit 4; the launcher reports rank K.
 *   --sweep         after the verified run, rank 0 also prints the bus
 *                   bandwidth of every power-of-two size from 1 MiB to
 *                   --mib, one "sweep <bytes> <ms> <algbw> <busbw>" line
 *                   each (bench/multi_gpu reads them)
 *
 * Started by another launcher. Where torchrun (RANK, WORLD_SIZE,
 * LOCAL_RANK), mpirun (OMPI_COMM_WORLD_RANK/SIZE/LOCAL_RANK, or PMI_RANK,
 * PMI_SIZE, MPI_LOCALRANKID) or srun (SLURM_PROCID, SLURM_NTASKS,
 * SLURM_LOCALID) started this process, it is one rank of that job and
 * starts nobody: its GPU is its local rank, and rank 0 hands the NCCL
 * unique id to the others over TCP at MASTER_ADDR (default 127.0.0.1),
 * port CUABI_NCCL_ID_PORT (default MASTER_PORT + 1, since torchrun's own
 * store listens on MASTER_PORT; 29501 when neither is set). On several
 * hosts, set MASTER_ADDR to rank 0's host. With no launcher's control
 * channel, a failed rank is noticed through NCCL's asynchronous error and
 * the --timeout of each wait; the launcher (torchrun, mpirun) ends the rest.
 *
 * NCCL is opened at run time: $CUABI_NCCL_PATH first when set, then
 * "libnccl.so.2" through the loader's search path. pip's nvidia-nccl-cu13
 * wheel puts it in site-packages/nvidia/nccl/lib: set CUABI_NCCL_PATH to
 * that file (see README.md). NCCL_NVLS_ENABLE=0 is set before NCCL is
 * loaded, in every process: NVLink multicast is never asked for.
 *
 * Exit status: 0 verified (or one device: "needs two devices, found 1"),
 * 1 failure, 2 NCCL could not be loaded, 3 no CUDA device, 4 a rank failed
 * and the others were stopped, 5 the deadline passed. See mg_util.h.
 */
#define _GNU_SOURCE /* dladdr, to report where NCCL was loaded from */
#define MG_PROG "nccl_allreduce"
#include <arpa/inet.h>
#include <dlfcn.h>
#include <math.h>
#include <netdb.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include "mg_util.h"

/* ------------------------------------------------------------------------- */
/* The few NCCL declarations needed (nccl.h is not included: NCCL is opened   */
/* at run time and need not be installed to build this).                      */
/* ------------------------------------------------------------------------- */

typedef struct nccl_comm_s* nccl_comm_t; /* ncclComm_t */
typedef struct {
  char internal[128];
} nccl_unique_id;          /* ncclUniqueId */
typedef int nccl_result_t; /* ncclResult_t */
#define NCCL_SUCCESS 0     /* ncclSuccess */
#define NCCL_IN_PROGRESS 7 /* ncclInProgress */
#define NCCL_FLOAT32 7     /* ncclFloat32 (ncclDataType_t) */
#define NCCL_SUM 0         /* ncclSum (ncclRedOp_t) */

typedef struct {
  void* lib;
  char path[4096];
  int version;
  nccl_result_t (*get_version)(int*);
  nccl_result_t (*get_unique_id)(nccl_unique_id*);
  nccl_result_t (*comm_init_rank)(nccl_comm_t*, int, nccl_unique_id, int);
  nccl_result_t (*all_reduce)(const void*, void*, size_t, int, int, nccl_comm_t, void*);
  nccl_result_t (*comm_get_async_error)(nccl_comm_t, nccl_result_t*);
  nccl_result_t (*comm_abort)(nccl_comm_t);
  nccl_result_t (*comm_finalize)(nccl_comm_t); /* NCCL 2.14+; optional */
  nccl_result_t (*comm_destroy)(nccl_comm_t);
  const char* (*get_error_string)(nccl_result_t);
  const char* (*get_last_error)(nccl_comm_t); /* NCCL 2.13+; optional */
} nccl_api;

/* Looks `name` up in `lib` into the function pointer at `fn` (a void*
 * cannot be assigned to a function pointer in ISO C; its bytes can). */
static int nccl_sym(void* lib, const char* name, void* fn, size_t fn_size, int required, char* why,
                    size_t why_size) {
  void* sym = dlsym(lib, name);
  if (!sym && required) {
    snprintf(why, why_size, "it has no %s", name);
    return -1;
  }
  memcpy(fn, &sym, fn_size);
  return 0;
}

#define NCCL_SYM(field, name, required) \
  (nccl_sym(api->lib, name, &api->field, sizeof api->field, required, why, sizeof why) == 0)

/* Opens NCCL: $CUABI_NCCL_PATH when set, then "libnccl.so.2". On failure
 * prints every place tried and why, and returns -1. */
static int nccl_load(nccl_api* api) {
  memset(api, 0, sizeof *api);
  const char* candidates[2];
  int k = 0;
  const char* env = getenv("CUABI_NCCL_PATH");
  if (env && *env) candidates[k++] = env;
  candidates[k++] = "libnccl.so.2";
  char tried[8192] = "";
  for (int i = 0; i < k; ++i) {
    char why[512] = "";
    dlerror();
    api->lib = dlopen(candidates[i], RTLD_NOW | RTLD_LOCAL);
    if (!api->lib) {
      const char* err = dlerror();
      snprintf(why, sizeof why, "%s", err ? err : "dlopen failed");
    } else if (NCCL_SYM(get_version, "ncclGetVersion", 1) &&
               NCCL_SYM(get_unique_id, "ncclGetUniqueId", 1) &&
               NCCL_SYM(comm_init_rank, "ncclCommInitRank", 1) &&
               NCCL_SYM(all_reduce, "ncclAllReduce", 1) &&
               NCCL_SYM(comm_get_async_error, "ncclCommGetAsyncError", 1) &&
               NCCL_SYM(comm_abort, "ncclCommAbort", 1) &&
               NCCL_SYM(comm_finalize, "ncclCommFinalize", 0) &&
               NCCL_SYM(comm_destroy, "ncclCommDestroy", 1) &&
               NCCL_SYM(get_error_string, "ncclGetErrorString", 1) &&
               NCCL_SYM(get_last_error, "ncclGetLastError", 0)) {
      if (api->get_version(&api->version) != NCCL_SUCCESS) api->version = 0;
      Dl_info info;
      void* where = NULL;
      memcpy(&where, &api->get_version, sizeof where);
      if (dladdr(where, &info) && info.dli_fname)
        snprintf(api->path, sizeof api->path, "%s", info.dli_fname);
      else
        snprintf(api->path, sizeof api->path, "%s", candidates[i]);
      return 0;
    } else {
      dlclose(api->lib);
      api->lib = NULL;
    }
    const size_t used = strlen(tried);
    snprintf(tried + used, sizeof tried - used, "  %s%s: %s\n", candidates[i],
             candidates[i] == env ? " ($CUABI_NCCL_PATH)" : "", why);
  }
  fprintf(stderr,
          "%s: NCCL could not be loaded. Tried:\n%s"
          "Install NCCL (libnccl.so.2 on the loader's path), or set CUABI_NCCL_PATH to the full\n"
          "path of libnccl.so.2 (pip's nvidia-nccl-cu13 wheel: site-packages/nvidia/nccl/lib/).\n",
          MG_PROG, tried);
  return -1;
}

static const char* nccl_error(const nccl_api* api, nccl_result_t r) {
  const char* s = api->get_error_string ? api->get_error_string(r) : NULL;
  return s ? s : "unknown NCCL error";
}

/* ------------------------------------------------------------------------- */
/* Options                                                                    */
/* ------------------------------------------------------------------------- */

typedef struct {
  int rank;   /* -1: the launcher */
  int nranks; /* 0: one per device */
  long mib, iters, warmup, timeout, deadline;
  int fault_rank; /* -1: none */
  int fault_exit; /* 1: abort() instead of an illegal address */
  int sweep;      /* 1: also every power-of-two size from 1 MiB to mib */
  int external;   /* 1: a rank of torchrun, mpirun or srun */
  int device;     /* this rank's GPU (the local rank under another launcher) */
} options;

static long parse_long(const char* flag, const char* text, long min, long max) {
  char* end = NULL;
  errno = 0;
  const long v = strtol(text, &end, 10);
  if (errno || !end || *end || v < min || v > max) {
    fprintf(stderr, "%s: %s wants a number from %ld to %ld, not '%s'\n", MG_PROG, flag, min, max,
            text);
    exit(MG_EXIT_FAILED);
  }
  return v;
}

static void parse_options(int argc, char** argv, options* o) {
  o->rank = -1;
  o->nranks = 0;
  o->mib = 256;
  o->iters = 20;
  o->warmup = 5;
  o->timeout = 60;
  o->deadline = 300;
  o->fault_rank = -1;
  o->fault_exit = 0;
  o->sweep = 0;
  o->external = 0;
  o->device = -1;
  for (int i = 1; i < argc; i += 2) {
    const char* flag = argv[i];
    const char* value = i + 1 < argc ? argv[i + 1] : NULL;
    if (strcmp(flag, "--sweep") == 0) {
      o->sweep = 1;
      --i; /* takes no value */
    } else if (value && strcmp(flag, "--rank") == 0)
      o->rank = (int)parse_long(flag, value, 0, 1023);
    else if (value && (strcmp(flag, "--ranks") == 0 || strcmp(flag, "--nranks") == 0))
      o->nranks = (int)parse_long(flag, value, 1, 1024);
    else if (value && strcmp(flag, "--mib") == 0)
      o->mib = parse_long(flag, value, 1, 1 << 20);
    else if (value && strcmp(flag, "--iters") == 0)
      o->iters = parse_long(flag, value, 1, 100000);
    else if (value && strcmp(flag, "--warmup") == 0)
      o->warmup = parse_long(flag, value, 0, 100000);
    else if (value && strcmp(flag, "--timeout") == 0)
      o->timeout = parse_long(flag, value, 1, 86400);
    else if (value && strcmp(flag, "--deadline") == 0)
      o->deadline = parse_long(flag, value, 1, 86400);
    else if (value && strcmp(flag, "--fault-rank") == 0)
      o->fault_rank = (int)parse_long(flag, value, 0, 1023);
    else if (value && strcmp(flag, "--fault-kind") == 0 &&
             (strcmp(value, "address") == 0 || strcmp(value, "exit") == 0))
      o->fault_exit = strcmp(value, "exit") == 0;
    else {
      fprintf(stderr,
              "usage: %s [--ranks N] [--mib M] [--iters I] [--warmup W] [--timeout S]\n"
              "       [--deadline S] [--fault-rank K] [--fault-kind address|exit] [--sweep]\n"
              "  (unknown or incomplete argument '%s')\n",
              MG_PROG, flag);
      exit(MG_EXIT_FAILED);
    }
  }
}

/* ------------------------------------------------------------------------- */
/* Ranks started by another launcher                                          */
/* ------------------------------------------------------------------------- */

/* The first of `names` set in the environment, as a number >= 0; -1 if none. */
static long env_number(const char* const* names) {
  for (; *names; ++names) {
    const char* v = getenv(*names);
    if (v && *v) return parse_long(*names, v, 0, 1 << 20);
  }
  return -1;
}

/* Fills rank, nranks and device from torchrun's, mpirun's or srun's
 * environment; 0 when none of them started this process. */
static int from_launcher_env(options* o) {
  static const char* const rank_vars[] = {"RANK", "OMPI_COMM_WORLD_RANK", "PMI_RANK",
                                          "SLURM_PROCID", NULL};
  static const char* const size_vars[] = {"WORLD_SIZE", "OMPI_COMM_WORLD_SIZE", "PMI_SIZE",
                                          "SLURM_NTASKS", NULL};
  static const char* const local_vars[] = {"LOCAL_RANK", "OMPI_COMM_WORLD_LOCAL_RANK",
                                           "MPI_LOCALRANKID", "SLURM_LOCALID", NULL};
  const long rank = env_number(rank_vars), size = env_number(size_vars);
  if (rank < 0 || size < 1) return 0;
  if (rank >= size) {
    fprintf(stderr, "%s: the launcher's environment gives rank %ld of %ld ranks\n", MG_PROG, rank,
            size);
    exit(MG_EXIT_FAILED);
  }
  o->external = 1;
  o->rank = (int)rank;
  o->nranks = (int)size;
  const long local = env_number(local_vars);
  o->device = (int)(local >= 0 ? local : rank);
  return 1;
}

/* Where rank 0 hands out the unique id: MASTER_ADDR and CUABI_NCCL_ID_PORT,
 * or MASTER_PORT + 1, or 29501. */
static void id_address(char* host, size_t host_size, char* port, size_t port_size) {
  const char* addr = getenv("MASTER_ADDR");
  snprintf(host, host_size, "%s", addr && *addr ? addr : "127.0.0.1");
  const char* explicit_port = getenv("CUABI_NCCL_ID_PORT");
  const char* master_port = getenv("MASTER_PORT");
  long p = 29501;
  if (explicit_port && *explicit_port)
    p = parse_long("CUABI_NCCL_ID_PORT", explicit_port, 1, 65535);
  else if (master_port && *master_port)
    p = parse_long("MASTER_PORT", master_port, 1, 65534) + 1;
  snprintf(port, port_size, "%ld", p);
}

/* Rank 0: serves `id` to nranks - 1 connections. Others: connect (retrying
 * until `timeout`) and read it. 0 on success. */
static int exchange_id_tcp(const options* o, nccl_unique_id* id) {
  char host[256], port[16];
  id_address(host, sizeof host, port, sizeof port);
  struct addrinfo hints, *ai = NULL;
  memset(&hints, 0, sizeof hints);
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  if (o->rank == 0) hints.ai_flags = AI_PASSIVE;
  const int gai = getaddrinfo(o->rank == 0 ? NULL : host, port, &hints, &ai);
  if (gai != 0) {
    fprintf(stderr, "[rank %d] cannot resolve %s:%s: %s\n", o->rank, host, port, gai_strerror(gai));
    return -1;
  }
  const double deadline = mg_now() + (double)o->timeout;
  int rc = -1;
  if (o->rank == 0) {
    const int ls = socket(ai->ai_family, ai->ai_socktype, ai->ai_protocol);
    const int one = 1;
    if (ls >= 0) setsockopt(ls, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    if (ls < 0 || bind(ls, ai->ai_addr, ai->ai_addrlen) != 0 || listen(ls, 64) != 0) {
      fprintf(stderr, "[rank 0] cannot listen on port %s for the NCCL unique id: %s\n", port,
              strerror(errno));
    } else {
      rc = 0;
      for (int served = 1; served < o->nranks && rc == 0; ++served) {
        struct pollfd p = {ls, POLLIN, 0};
        const double left = deadline - mg_now();
        if (left <= 0 || poll(&p, 1, (int)(left * 1000)) <= 0) {
          fprintf(stderr, "[rank 0] %d of %d ranks did not ask for the unique id within %ld s\n",
                  o->nranks - served, o->nranks - 1, o->timeout);
          rc = -1;
          break;
        }
        const int c = accept(ls, NULL, NULL);
        if (c < 0 || mg_write_full(c, id, sizeof *id) != 0) rc = -1;
        if (c >= 0) close(c);
      }
    }
    if (ls >= 0) close(ls);
  } else {
    while (rc != 0 && mg_now() < deadline) {
      const int c = socket(ai->ai_family, ai->ai_socktype, ai->ai_protocol);
      if (c >= 0 && connect(c, ai->ai_addr, ai->ai_addrlen) == 0 &&
          mg_read_full(c, id, sizeof *id, deadline) == 0)
        rc = 0;
      if (c >= 0) close(c);
      if (rc != 0) mg_sleep_ms(100);
    }
    if (rc != 0)
      fprintf(stderr, "[rank %d] did not get the NCCL unique id from %s:%s within %ld s\n",
              o->rank, host, port, o->timeout);
  }
  freeaddrinfo(ai);
  return rc;
}

/* ------------------------------------------------------------------------- */
/* A rank                                                                     */
/* ------------------------------------------------------------------------- */

static const char* kSource =
    "extern \"C\" __global__ void fill(float* x, size_t n, int rank) {\n"
    "  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;\n"
    "       i += (size_t)gridDim.x * blockDim.x)\n"
    "    x[i] = (float)((rank + 1) * (int)(i % 251));\n"
    "}\n"
    "extern \"C\" __global__ void scale(float* x, size_t n, float s) {\n"
    "  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;\n"
    "       i += (size_t)gridDim.x * blockDim.x)\n"
    "    x[i] = x[i] * s;\n"
    "}\n";

#define THREADS 256u
#define BLOCKS 4096u

typedef struct {
  const options* o;
  nccl_api api;
  nccl_comm_t comm;
  cuabi_stream stream;
} rank_state;

/* Ends this rank after a failure that the others must hear of: aborts the
 * communicator (which also stops this rank's NCCL kernels) and leaves with
 * `code` without running exit handlers. */
static void abort_and_exit(rank_state* s, int code) {
  const double t0 = mg_now();
  const nccl_result_t r = s->api.comm_abort(s->comm);
  printf("[rank %d] ncclCommAbort: %s (%.2f s); exiting with status %d\n", s->o->rank,
         nccl_error(&s->api, r), mg_now() - t0, code);
  fflush(NULL);
  _exit(code);
}

/* Waits for everything queued on the rank's stream, without blocking: polls
 * the stream, NCCL's asynchronous error, the launcher's control channel
 * (standard input) and the deadline. Returns only when the work is done. */
static void wait_stream(rank_state* s, const char* what) {
  const int rank = s->o->rank;
  const double deadline = mg_now() + (double)s->o->timeout;
  for (;;) {
    const cuabi_status st = cuabi_stream_query(s->stream);
    if (st == CUABI_SUCCESS) return;
    if (st != CUABI_ERROR_NOT_READY) {
      fprintf(stderr, "[rank %d] waiting for %s: %s: %s\n", rank, what, cuabi_status_get_name(st),
              cuabi_last_error_message());
      abort_and_exit(s, MG_EXIT_FAILED);
    }
    nccl_result_t async = NCCL_SUCCESS;
    const nccl_result_t r = s->api.comm_get_async_error(s->comm, &async);
    if (r != NCCL_SUCCESS || (async != NCCL_SUCCESS && async != NCCL_IN_PROGRESS)) {
      const char* detail = s->api.get_last_error ? s->api.get_last_error(s->comm) : NULL;
      fprintf(stderr, "[rank %d] NCCL reports an error while waiting for %s: %s%s%s\n", rank, what,
              nccl_error(&s->api, r != NCCL_SUCCESS ? r : async), detail && *detail ? ": " : "",
              detail ? detail : "");
      abort_and_exit(s, MG_EXIT_PEER_FAILED);
    }
    struct pollfd p;
    p.fd = 0;
    p.events = POLLIN;
    p.revents = 0;
    if (!s->o->external && poll(&p, 1, 0) > 0) {
      int32_t failed = -1;
      const ssize_t got = read(0, &failed, sizeof failed);
      if (got == (ssize_t)sizeof failed)
        fprintf(stderr,
                "[rank %d] the launcher reports that rank %d failed; aborting the "
                "communicator while waiting for %s\n",
                rank, (int)failed, what);
      else
        fprintf(stderr,
                "[rank %d] the launcher's control channel closed; aborting the "
                "communicator while waiting for %s\n",
                rank, what);
      abort_and_exit(s, MG_EXIT_PEER_FAILED);
    }
    if (mg_now() > deadline) {
      fprintf(stderr, "[rank %d] %s did not finish within %ld s; aborting the communicator\n", rank,
              what, s->o->timeout);
      abort_and_exit(s, MG_EXIT_TIMEOUT);
    }
    mg_sleep_ms(1);
  }
}

static void launch(cuabi_function f, cuabi_stream stream, void** args, const size_t* sizes,
                   size_t count) {
  const cuabi_launch_config config = mg_config(BLOCKS, THREADS);
  MG_CHECK(cuabi_function_launch_sized(f, &config, stream, args, sizes, count));
}

static int rank_main(const options* o) {
  const int rank = o->rank, n = o->nranks;
  rank_state s;
  memset(&s, 0, sizeof s);
  s.o = o;
  if (n < 1 || rank >= n) {
    fprintf(stderr, "[rank %d] --nranks %d does not include this rank\n", rank, n);
    return MG_EXIT_FAILED;
  }
  if (nccl_load(&s.api) != 0) return MG_EXIT_NO_NCCL;

  cuabi_device dev = NULL;
  const int ordinal = o->device >= 0 ? o->device : rank;
  MG_CHECK(cuabi_device_get(ordinal, &dev));
  /* Any call on the device leaves its primary context current on this
   * thread: that is the context (and device) NCCL then uses. */
  MG_CHECK(cuabi_device_synchronize(dev));
  char name[256];
  mg_device_name(dev, name, sizeof name);

  /* The unique id: rank 0 makes it and hands it to the launcher (fd 3);
   * the others get it from the launcher (standard input). */
  nccl_unique_id id;
  memset(&id, 0, sizeof id);
  if (rank == 0) {
    const nccl_result_t r = s.api.get_unique_id(&id);
    if (r != NCCL_SUCCESS) {
      fprintf(stderr, "[rank 0] ncclGetUniqueId: %s\n", nccl_error(&s.api, r));
      return MG_EXIT_FAILED;
    }
  }
  if (o->external) {
    if (exchange_id_tcp(o, &id) != 0) return MG_EXIT_FAILED;
  } else if (rank == 0) {
    if (mg_write_full(3, &id, sizeof id) != 0) {
      fprintf(stderr, "[rank 0] could not hand the unique id to the launcher: %s\n",
              strerror(errno));
      return MG_EXIT_FAILED;
    }
    close(3);
  }

  cuabi_module module = mg_compile(dev, kSource, "nccl_allreduce.cu");
  cuabi_function fill = mg_function(module, "fill");
  cuabi_function scale = mg_function(module, "scale");
  MG_CHECK(cuabi_stream_create(dev, CUABI_STREAM_NON_BLOCKING, 0, &s.stream));
  uint64_t raw_stream = 0;
  MG_CHECK(cuabi_stream_get_handle(s.stream, &raw_stream));
  size_t count = ((size_t)o->mib << 20) / sizeof(float);
  const size_t bytes = count * sizeof(float);
  cuabi_buffer buffer = NULL;
  MG_CHECK(cuabi_buffer_alloc(dev, bytes, &buffer));
  uint64_t ptr = 0;
  MG_CHECK(cuabi_buffer_get_pointer(buffer, &ptr));
  cuabi_event start = NULL, stop = NULL;
  MG_CHECK(cuabi_event_create(dev, 0, &start));
  MG_CHECK(cuabi_event_create(dev, 0, &stop));

  if (!o->external && rank != 0 &&
      mg_read_full(0, &id, sizeof id, mg_now() + (double)o->timeout) != 0) {
    fprintf(stderr, "[rank %d] did not get the NCCL unique id from the launcher within %ld s\n",
            rank, o->timeout);
    return MG_EXIT_FAILED;
  }
  MG_CHECK(cuabi_device_synchronize(dev)); /* this device's context current for NCCL */
  nccl_result_t r = s.api.comm_init_rank(&s.comm, n, id, rank);
  if (r != NCCL_SUCCESS) {
    fprintf(stderr, "[rank %d] ncclCommInitRank: %s\n", rank, nccl_error(&s.api, r));
    return MG_EXIT_FAILED;
  }
  printf("[rank %d] GPU %d (%s): communicator of %d rank%s ready (NCCL %d.%d.%d)%s\n", rank,
         ordinal, name, n, n == 1 ? "" : "s", s.api.version / 10000, s.api.version % 10000 / 100,
         s.api.version % 100, o->external ? ", started by the job's launcher" : "");

  /* 1. Rank-dependent data: (rank + 1) * (i % 251). */
  void* fill_args[] = {&ptr, &count, (void*)&rank};
  const size_t fill_sizes[] = {sizeof ptr, sizeof count, sizeof rank};
  launch(fill, s.stream, fill_args, fill_sizes, 3);

  if (rank == o->fault_rank) {
    if (o->fault_exit) {
      printf(
          "[rank %d] fault mode: ending this process with abort() instead of joining the "
          "all-reduce\n",
          rank);
      fflush(NULL);
      abort();
    }
    /* The scale kernel on an address no allocation holds: a sticky illegal
     * address in this process's context. */
    uint64_t bad = 16;
    float one = 1.0f;
    void* bad_args[] = {&bad, &count, &one};
    const size_t bad_sizes[] = {sizeof bad, sizeof count, sizeof one};
    launch(scale, s.stream, bad_args, bad_sizes, 3);
    printf("[rank %d] fault mode: launched a kernel that writes to an illegal address\n", rank);
    cuabi_status st;
    const double deadline = mg_now() + (double)o->timeout;
    while ((st = cuabi_stream_query(s.stream)) == CUABI_ERROR_NOT_READY && mg_now() < deadline)
      mg_sleep_ms(1);
    fprintf(stderr, "[rank %d] the planted fault: %s: %s\n", rank, cuabi_status_get_name(st),
            cuabi_last_error_message());
    fflush(NULL);
    /* This process's CUDA context is lost for good: leave at once, without
     * NCCL teardown (the others abort their side). */
    _exit(MG_EXIT_PLANTED_FAULT);
  }

  /* 2. All-reduce (sum) in place, on the raw pointer and the raw stream. */
  void* dptr = (void*)(uintptr_t)ptr;
  void* cu_stream = (void*)(uintptr_t)raw_stream;
  r = s.api.all_reduce(dptr, dptr, count, NCCL_FLOAT32, NCCL_SUM, s.comm, cu_stream);
  if (r != NCCL_SUCCESS) {
    fprintf(stderr, "[rank %d] ncclAllReduce: %s\n", rank, nccl_error(&s.api, r));
    abort_and_exit(&s, MG_EXIT_FAILED);
  }
  /* 3. A cuabi kernel on the reduced data: the mean over the ranks. */
  float inv = 1.0f / (float)n;
  void* scale_args[] = {&ptr, &count, &inv};
  const size_t scale_sizes[] = {sizeof ptr, sizeof count, sizeof inv};
  launch(scale, s.stream, scale_args, scale_sizes, 3);
  wait_stream(&s, "the all-reduce and the scale kernel");

  float* host = (float*)malloc(bytes);
  if (!host) {
    fprintf(stderr, "[rank %d] out of host memory\n", rank);
    abort_and_exit(&s, MG_EXIT_FAILED);
  }
  if (cuabi_buffer_copy_to_host(buffer, 0, host, bytes) != CUABI_SUCCESS) {
    fprintf(stderr, "[rank %d] cuabi_buffer_copy_to_host: %s\n", rank, cuabi_last_error_message());
    abort_and_exit(&s, MG_EXIT_FAILED);
  }
  const int tri = n * (n + 1) / 2;
  size_t bad = 0;
  for (size_t i = 0; i < count; ++i) {
    const float want = (float)(tri * (int)(i % 251)) * inv;
    if (!(fabsf(host[i] - want) <= 1e-6f * fabsf(want))) {
      if (bad < 5)
        fprintf(stderr, "[rank %d] element %zu is %g, expected %g\n", rank, i, host[i], want);
      ++bad;
    }
  }
  free(host);
  if (bad) {
    fprintf(stderr, "[rank %d] %zu of %zu values are wrong\n", rank, bad, count);
    abort_and_exit(&s, MG_EXIT_FAILED);
  }
  printf("[rank %d] all-reduce + scale verified (%zu floats)\n", rank, count);

  /* 4. Bandwidth: warm-up, then timed all-reduces of zeros. */
  MG_CHECK(cuabi_buffer_memset_async(buffer, 0, 0, bytes, s.stream));
  for (long i = 0; i < o->warmup + o->iters; ++i) {
    if (i == o->warmup) MG_CHECK(cuabi_event_record(start, s.stream));
    r = s.api.all_reduce(dptr, dptr, count, NCCL_FLOAT32, NCCL_SUM, s.comm, cu_stream);
    if (r != NCCL_SUCCESS) {
      fprintf(stderr, "[rank %d] ncclAllReduce: %s\n", rank, nccl_error(&s.api, r));
      abort_and_exit(&s, MG_EXIT_FAILED);
    }
  }
  MG_CHECK(cuabi_event_record(stop, s.stream));
  wait_stream(&s, "the timed all-reduces");
  float ms = 0;
  MG_CHECK(cuabi_event_get_elapsed_ms(start, stop, &ms));
  if (rank == 0) {
    const double seconds = (double)ms * 1e-3 / (double)o->iters;
    const double algbw = (double)bytes / seconds / 1e9;
    const double busbw = algbw * 2.0 * (double)(n - 1) / (double)n;
    printf(
        "[rank 0] all-reduce (sum, float32) of %ld MiB over %d rank%s: %ld iterations after "
        "%ld warm-up, %.3f ms each: algbw %.2f GB/s, busbw %.2f GB/s\n",
        o->mib, n, n == 1 ? "" : "s", o->iters, o->warmup, seconds * 1e3, algbw, busbw);
  }

  /* 4b. The sweep: every power of two from 1 MiB to the buffer's size, the
   * same timing (events on the rank's stream around `iters` all-reduces). */
  for (size_t part = (size_t)1 << 20; o->sweep && part <= bytes; part *= 2) {
    const size_t part_count = part / sizeof(float);
    for (long i = 0; i < o->warmup + o->iters; ++i) {
      if (i == o->warmup) MG_CHECK(cuabi_event_record(start, s.stream));
      r = s.api.all_reduce(dptr, dptr, part_count, NCCL_FLOAT32, NCCL_SUM, s.comm, cu_stream);
      if (r != NCCL_SUCCESS) {
        fprintf(stderr, "[rank %d] ncclAllReduce: %s\n", rank, nccl_error(&s.api, r));
        abort_and_exit(&s, MG_EXIT_FAILED);
      }
    }
    MG_CHECK(cuabi_event_record(stop, s.stream));
    wait_stream(&s, "the sweep's all-reduces");
    MG_CHECK(cuabi_event_get_elapsed_ms(start, stop, &ms));
    if (rank == 0) {
      const double seconds = (double)ms * 1e-3 / (double)o->iters;
      const double algbw = (double)part / seconds / 1e9;
      printf("sweep %zu %.4f %.2f %.2f\n", part, seconds * 1e3, algbw,
             algbw * 2.0 * (double)(n - 1) / (double)n);
    }
  }

  /* 5. Orderly teardown. */
  if (s.api.comm_finalize) {
    r = s.api.comm_finalize(s.comm);
    if (r != NCCL_SUCCESS)
      fprintf(stderr, "[rank %d] ncclCommFinalize: %s\n", rank, nccl_error(&s.api, r));
  }
  r = s.api.comm_destroy(s.comm);
  if (r != NCCL_SUCCESS) {
    fprintf(stderr, "[rank %d] ncclCommDestroy: %s\n", rank, nccl_error(&s.api, r));
    return MG_EXIT_FAILED;
  }
  cuabi_event_release(start);
  cuabi_event_release(stop);
  cuabi_buffer_release(buffer);
  cuabi_stream_release(s.stream);
  cuabi_function_release(fill);
  cuabi_function_release(scale);
  cuabi_module_release(module);
  cuabi_device_release(dev);
  return MG_EXIT_OK;
}

/* ------------------------------------------------------------------------- */
/* The launcher                                                               */
/* ------------------------------------------------------------------------- */

typedef struct {
  pid_t pid;
  int control; /* write end of the rank's standard input; -1 once closed */
  int running;
  int status;
  int killed; /* 1: killed by the launcher */
} rank_proc;

static const char* meaning(int status, int killed) {
  if (killed) return "killed by the launcher";
  if (WIFSIGNALED(status)) return "ended abnormally";
  if (!WIFEXITED(status)) return "?";
  switch (WEXITSTATUS(status)) {
    case MG_EXIT_OK:
      return "verified";
    case MG_EXIT_FAILED:
      return "failed";
    case MG_EXIT_NO_NCCL:
      return "NCCL could not be loaded";
    case MG_EXIT_NO_DEVICE:
      return "no CUDA device";
    case MG_EXIT_PEER_FAILED:
      return "stopped after a peer failed: aborted its communicator";
    case MG_EXIT_TIMEOUT:
      return "timed out: aborted its communicator";
    case MG_EXIT_PLANTED_FAULT:
      return "the planted fault";
    default:
      return "failed";
  }
}

static int failed_status(int status) { return !WIFEXITED(status) || WEXITSTATUS(status) != 0; }

/* Reaps ranks that ended; returns a rank that failed in this call (or -1),
 * preferring one that failed on its own over one that stopped because of a
 * peer (status 4), when both ended since the last call. */
static int reap(rank_proc* ranks, int n) {
  int first = -1, origin = -1;
  for (int r = 0; r < n; ++r) {
    if (!ranks[r].running) continue;
    int status = 0;
    const pid_t got = waitpid(ranks[r].pid, &status, WNOHANG);
    if (got != ranks[r].pid) continue;
    ranks[r].running = 0;
    ranks[r].status = status;
    if (!failed_status(status)) continue;
    if (first < 0) first = r;
    if (origin < 0 && !(WIFEXITED(status) && WEXITSTATUS(status) == MG_EXIT_PEER_FAILED))
      origin = r;
  }
  return origin >= 0 ? origin : first;
}

static void kill_running(rank_proc* ranks, int n) {
  for (int r = 0; r < n; ++r) {
    if (!ranks[r].running) continue;
    kill(ranks[r].pid, SIGKILL);
    int status = 0;
    while (waitpid(ranks[r].pid, &status, 0) < 0 && errno == EINTR) {
    }
    ranks[r].running = 0;
    ranks[r].status = status;
    ranks[r].killed = 1;
  }
}

static int launcher_main(const options* o, char* argv0) {
  signal(SIGPIPE, SIG_IGN); /* a rank that ended closes its pipe */
  const int32_t count = mg_device_count();
  if (count == 0) return MG_EXIT_NO_DEVICE;
  if (o->nranks == 0 && count < 2) {
    printf("%s: needs two devices, found %d\n", MG_PROG, count);
    return MG_EXIT_OK;
  }
  const int n = o->nranks ? o->nranks : count;
  if (n > count) {
    fprintf(stderr, "%s: --ranks %d, but there %s only %d device%s (NCCL takes one GPU per rank)\n",
            MG_PROG, n, count == 1 ? "is" : "are", count, count == 1 ? "" : "s");
    return MG_EXIT_FAILED;
  }
  if (o->fault_rank >= n) {
    fprintf(stderr, "%s: --fault-rank %d, but there are %d ranks\n", MG_PROG, o->fault_rank, n);
    return MG_EXIT_FAILED;
  }
  nccl_api api;
  if (nccl_load(&api) != 0) return MG_EXIT_NO_NCCL;
  printf("%s: %d rank%s, one process per GPU; NCCL %d.%d.%d from %s; NCCL_NVLS_ENABLE=%s\n",
         MG_PROG, n, n == 1 ? "" : "s", api.version / 10000, api.version % 10000 / 100,
         api.version % 100, api.path, getenv("NCCL_NVLS_ENABLE"));
  if (o->fault_rank >= 0)
    printf("%s: fault mode: rank %d will fail (%s) right after the communicator is made\n", MG_PROG,
           o->fault_rank, o->fault_exit ? "abort()" : "an illegal address");
  dlclose(api.lib);

  rank_proc* ranks = (rank_proc*)calloc((size_t)n, sizeof *ranks);
  if (!ranks) return MG_EXIT_FAILED;
  int id_pipe[2];
  if (mg_pipe(id_pipe) != 0) return MG_EXIT_FAILED;
  char nranks_text[16], mib_text[32], iters_text[32], warmup_text[32], timeout_text[32],
      fault_text[16];
  snprintf(nranks_text, sizeof nranks_text, "%d", n);
  snprintf(mib_text, sizeof mib_text, "%ld", o->mib);
  snprintf(iters_text, sizeof iters_text, "%ld", o->iters);
  snprintf(warmup_text, sizeof warmup_text, "%ld", o->warmup);
  snprintf(timeout_text, sizeof timeout_text, "%ld", o->timeout);
  snprintf(fault_text, sizeof fault_text, "%d", o->fault_rank);
  char f_rank[] = "--rank", f_nranks[] = "--nranks", f_mib[] = "--mib", f_iters[] = "--iters",
       f_warmup[] = "--warmup", f_timeout[] = "--timeout", f_fault[] = "--fault-rank",
       f_kind[] = "--fault-kind", k_exit[] = "exit", k_address[] = "address",
       f_sweep[] = "--sweep";
  for (int r = 0; r < n; ++r) {
    int control[2];
    if (mg_pipe(control) != 0) {
      kill_running(ranks, r);
      return MG_EXIT_FAILED;
    }
    char rank_text[16];
    snprintf(rank_text, sizeof rank_text, "%d", r);
    char* args[20];
    int k = 0;
    args[k++] = argv0;
    args[k++] = f_rank;
    args[k++] = rank_text;
    args[k++] = f_nranks;
    args[k++] = nranks_text;
    args[k++] = f_mib;
    args[k++] = mib_text;
    args[k++] = f_iters;
    args[k++] = iters_text;
    args[k++] = f_warmup;
    args[k++] = warmup_text;
    args[k++] = f_timeout;
    args[k++] = timeout_text;
    if (o->sweep) args[k++] = f_sweep;
    if (o->fault_rank >= 0) {
      args[k++] = f_fault;
      args[k++] = fault_text;
      args[k++] = f_kind;
      args[k++] = o->fault_exit ? k_exit : k_address;
    }
    args[k] = NULL;
    if (mg_spawn_self(args, control[0], r == 0 ? id_pipe[1] : -1, &ranks[r].pid) != 0) {
      close(control[0]);
      close(control[1]);
      kill_running(ranks, r);
      return MG_EXIT_FAILED;
    }
    close(control[0]);
    ranks[r].control = control[1];
    ranks[r].running = 1;
  }
  close(id_pipe[1]);

  const double t0 = mg_now();
  const double deadline = t0 + (double)o->deadline;
  const double grace = 30.0; /* after a failure, for the others to abort */
  int first_failed = -1, timed_out = 0, killed_after_grace = 0;
  double failed_at = 0;

  /* The unique id from rank 0, on to the others. */
  nccl_unique_id id;
  const int got_id = mg_read_full(id_pipe[0], &id, sizeof id, t0 + (double)o->timeout) == 0;
  close(id_pipe[0]);
  if (got_id) {
    for (int r = 1; r < n; ++r)
      if (mg_write_full(ranks[r].control, &id, sizeof id) != 0)
        fprintf(stderr, "%s: could not pass the unique id to rank %d: %s\n", MG_PROG, r,
                strerror(errno));
  } else {
    /* The others are waiting for the id: closing their input tells them. */
    fprintf(stderr, "%s: rank 0 did not hand over the NCCL unique id within %ld s\n", MG_PROG,
            o->timeout);
    for (int r = 0; r < n; ++r) {
      close(ranks[r].control);
      ranks[r].control = -1;
    }
    first_failed = 0;
    failed_at = mg_now();
  }

  /* Watch the ranks until every one has ended; tell the others of the
   * first failure (they abort their communicator and exit). */
  for (;;) {
    const int failed = reap(ranks, n);
    if (failed >= 0 && first_failed < 0) {
      first_failed = failed;
      failed_at = mg_now();
      char what[128];
      mg_describe_status(ranks[failed].status, what, sizeof what);
      fprintf(stderr, "%s: rank %d failed (%s); telling the other ranks\n", MG_PROG, failed, what);
      const int32_t notice = failed;
      for (int r = 0; r < n; ++r)
        if (ranks[r].running && ranks[r].control >= 0)
          (void)mg_write_full(ranks[r].control, &notice, sizeof notice);
    }
    int running = 0;
    for (int r = 0; r < n; ++r) running += ranks[r].running;
    if (!running) break;
    if (first_failed >= 0 && mg_now() > failed_at + grace) {
      fprintf(stderr, "%s: ranks still running %.0f s after rank %d failed; killing them\n",
              MG_PROG, grace, first_failed);
      kill_running(ranks, n);
      killed_after_grace = 1;
      break;
    }
    if (mg_now() > deadline) {
      fprintf(stderr, "%s: the deadline of %ld s passed; killing the ranks still running\n",
              MG_PROG, o->deadline);
      kill_running(ranks, n);
      timed_out = 1;
      break;
    }
    mg_sleep_ms(10);
  }
  for (int r = 0; r < n; ++r)
    if (ranks[r].control >= 0) close(ranks[r].control);

  /* Report. */
  int all_ok = 1, all_no_nccl = 1;
  for (int r = 0; r < n; ++r) {
    char what[128];
    mg_describe_status(ranks[r].status, what, sizeof what);
    printf("%s:   rank %d (GPU %d): %s: %s\n", MG_PROG, r, r, what,
           meaning(ranks[r].status, ranks[r].killed));
    if (failed_status(ranks[r].status) || ranks[r].killed) all_ok = 0;
    if (!(WIFEXITED(ranks[r].status) && WEXITSTATUS(ranks[r].status) == MG_EXIT_NO_NCCL))
      all_no_nccl = 0;
  }
  const double took = mg_now() - t0;
  free(ranks);
  if (all_ok) {
    printf("%s: PASSED: all-reduce of %ld MiB over %d rank%s verified on every rank (%.1f s)\n",
           MG_PROG, o->mib, n, n == 1 ? "" : "s", took);
    return MG_EXIT_OK;
  }
  if (all_no_nccl) return MG_EXIT_NO_NCCL;
  if (timed_out) {
    printf("%s: FAILED: not every rank ended within %ld s\n", MG_PROG, o->deadline);
    return MG_EXIT_TIMEOUT;
  }
  if (first_failed < 0) first_failed = 0; /* not reached: some rank failed */
  printf("%s: rank %d failed first%s; the launcher %s after %.1f s\n", MG_PROG, first_failed,
         first_failed == o->fault_rank ? " (as --fault-rank asked)" : "",
         killed_after_grace ? "killed the ranks that did not stop"
                            : "saw every other rank stop on its own",
         took);
  return MG_EXIT_PEER_FAILED;
}

int main(int argc, char** argv) {
  setvbuf(stdout, NULL, _IOLBF, 0);
  /* Before NCCL is loaded, here and (inherited) in every rank: no NVLink
   * multicast (NVLS). */
  if (setenv("NCCL_NVLS_ENABLE", "0", 1) != 0) {
    fprintf(stderr, "%s: setenv(NCCL_NVLS_ENABLE) failed: %s\n", MG_PROG, strerror(errno));
    return MG_EXIT_FAILED;
  }
  options o;
  parse_options(argc, argv, &o);
  if (o.rank >= 0) return rank_main(&o);
  if (from_launcher_env(&o)) {
    const int rc = rank_main(&o);
    if (rc == MG_EXIT_OK && o.rank == 0)
      printf("%s: PASSED: all-reduce of %ld MiB over %d ranks verified on rank 0 (started by the "
             "job's launcher; each rank checks its own result)\n",
             MG_PROG, o.mib, o.nranks);
    return rc;
  }
  return launcher_main(&o, argv[0]);
}
