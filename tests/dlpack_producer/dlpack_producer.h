/* The test producer of DLPack tensors (dlpack_producer.c). */
#ifndef CUABI_TEST_DLPACK_PRODUCER_H
#define CUABI_TEST_DLPACK_PRODUCER_H
#include <stdint.h>
#ifdef __cplusplus
extern "C" {
#endif
int dlpack_producer_make(int device, int64_t n, float start, uint64_t flags, void** tensor,
                         uint64_t* ptr);
int dlpack_producer_make_unversioned(int device, int64_t n, float start, void** tensor,
                                     uint64_t* ptr);
int dlpack_producer_deleted(void);
int dlpack_producer_freed(void);
void dlpack_producer_reset(void);
#ifdef __cplusplus
}
#endif
#endif
