/*
 * The stand-in driver (tests/fake/fake_cuda.c, included as it is; its fault
 * injection is never armed here) with one addition for the instruction
 * counts: cuStreamQuery answers what the measuring program asks for
 * (CUDA_SUCCESS or CUDA_ERROR_NOT_READY), so both answers of
 * cuabi_stream_query can be counted. The measuring
 * program finds the switch with dlsym: instructions_fake_set_stream_query.
 *
 * The stand-in's own cuGetProcAddress_v2 is renamed on the way in; the one
 * exported here hands out the switchable cuStreamQuery and forwards every
 * other name to it.
 */
#define cuGetProcAddress_v2 instructions_inner_cuGetProcAddress_v2
#include "../../tests/fake/fake_cuda.c"
#undef cuGetProcAddress_v2

static CUresult stream_query_answer = CUDA_SUCCESS;

EXPORT void instructions_fake_set_stream_query(int not_ready) {
  stream_query_answer = not_ready ? CUDA_ERROR_NOT_READY : CUDA_SUCCESS;
}

static CUresult CUDAAPI switchable_stream_query(CUstream s) {
  (void)s;
  return stream_query_answer;
}

EXPORT CUresult CUDAAPI cuGetProcAddress_v2(const char* symbol, void** pfn, int version,
                                            cuuint64_t flags,
                                            CUdriverProcAddressQueryResult* status);
EXPORT CUresult CUDAAPI cuGetProcAddress_v2(const char* symbol, void** pfn, int version,
                                            cuuint64_t flags,
                                            CUdriverProcAddressQueryResult* status) {
  if (strcmp(symbol, "cuStreamQuery") == 0) {
    *pfn = (void*)&switchable_stream_query;
    if (status) *status = CU_GET_PROC_ADDRESS_SUCCESS;
    return CUDA_SUCCESS;
  }
  return instructions_inner_cuGetProcAddress_v2(symbol, pfn, version, flags, status);
}
