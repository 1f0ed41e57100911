/* The CUDA driver's entry points that cuabi calls, listed once.
 *
 * X(name, version): requested through cuGetProcAddress at `version`; the type
 * is cudaTypedefs.h's PFN_<name>_v<version>. The core's driver table
 * (driver.hpp) and the stand-in driver of the tests and benchmarks
 * (tests/fake/fake_cuda.c) are both made from this macro, so a new entry
 * point is added here and nowhere else: the stand-in answers one it does not
 * implement with CUDA_ERROR_NOT_SUPPORTED.
 *
 * Plain preprocessor text, for C and C++ alike; it includes nothing. */
#ifndef CUABI_CORE_DRIVER_ENTRY_POINTS_H
#define CUABI_CORE_DRIVER_ENTRY_POINTS_H

#define CUABI_DRIVER_ENTRY_POINTS(X)                   \
  X(cuInit, 2000)                                      \
  X(cuDriverGetVersion, 2020)                          \
  X(cuGetErrorName, 6000)                              \
  X(cuGetErrorString, 6000)                            \
  X(cuDeviceGetCount, 2000)                            \
  X(cuDeviceGet, 2000)                                 \
  X(cuDeviceGetName, 2000)                             \
  X(cuDeviceGetAttribute, 2000)                        \
  X(cuDeviceTotalMem, 3020)                            \
  X(cuDeviceGetUuid, 11040)                            \
  X(cuDevicePrimaryCtxRetain, 7000)                    \
  X(cuDevicePrimaryCtxRelease, 11000)                  \
  X(cuDevicePrimaryCtxReset, 11000)                    \
  X(cuCtxGetCurrent, 4000)                             \
  X(cuCtxSetCurrent, 4000)                             \
  X(cuCtxSynchronize, 2000)                            \
  X(cuCtxGetLimit, 3010)                               \
  X(cuCtxSetLimit, 3010)                               \
  X(cuCtxResetPersistingL2Cache, 11000)                \
  X(cuProfilerStart, 4000)                             \
  X(cuProfilerStop, 4000)                              \
  X(cuLogsRegisterCallback, 12090)                     \
  X(cuCoredumpSetAttribute, 12010)                     \
  X(cuCoredumpSetAttributeGlobal, 12010)               \
  X(cuStreamWriteValue32, 11070)                       \
  X(cuStreamWriteValue64, 11070)                       \
  X(cuStreamWaitValue32, 11070)                        \
  X(cuStreamWaitValue64, 11070)                        \
  /* batches: memory operations, copies, prefetches */  \
  X(cuStreamBatchMemOp, 11070)                         \
  X(cuMemcpyBatchAsync, 13000)                         \
  X(cuMemcpy3DBatchAsync, 13000)                       \
  X(cuMemPrefetchBatchAsync, 13000)                    \
  X(cuMemDiscardBatchAsync, 13000)                     \
  X(cuMemDiscardAndPrefetchBatchAsync, 13000)          \
  X(cuMemHostGetDevicePointer, 3020)                   \
  X(cuStreamGetAttribute, 11000)                       \
  X(cuStreamSetAttribute, 11000)                       \
  X(cuCtxGetStreamPriorityRange, 5050)                 \
  X(cuMemGetInfo, 3020)                                \
  X(cuModuleLoadData, 2000)                            \
  X(cuModuleUnload, 2000)                              \
  X(cuModuleGetFunction, 2000)                         \
  X(cuModuleGetGlobal, 3020)                           \
  X(cuFuncGetParamInfo, 12040)                         \
  X(cuFuncGetAttribute, 2020)                          \
  X(cuFuncSetAttribute, 9000)                          \
  X(cuLaunchKernel, 4000)                              \
  X(cuMemAlloc, 3020)                                  \
  X(cuMemFree, 3020)                                   \
  X(cuMemsetD8, 3020)                                  \
  X(cuMemsetD8Async, 3020)                             \
  X(cuMemcpyHtoD, 3020)                                \
  X(cuMemcpyDtoH, 3020)                                \
  X(cuMemcpyDtoD, 3020)                                \
  X(cuMemcpyHtoDAsync, 3020)                           \
  X(cuMemcpyDtoHAsync, 3020)                           \
  X(cuMemcpyDtoDAsync, 3020)                           \
  X(cuMemHostAlloc, 2020)                              \
  X(cuMemFreeHost, 2000)                               \
  X(cuMemHostRegister, 6050)                           \
  X(cuMemHostUnregister, 4000)                         \
  X(cuStreamCreateWithPriority, 5050)                  \
  X(cuStreamDestroy, 4000)                             \
  X(cuStreamSynchronize, 2000)                         \
  X(cuStreamQuery, 2000)                               \
  X(cuStreamWaitEvent, 3020)                           \
  X(cuStreamBeginCapture, 10010)                       \
  X(cuStreamEndCapture, 10000)                         \
  X(cuEventCreate, 2000)                               \
  X(cuEventRecord, 2000)                               \
  X(cuEventSynchronize, 2000)                          \
  X(cuEventQuery, 2000)                                \
  X(cuEventElapsedTime, 2000)                          \
  X(cuEventDestroy, 4000)                              \
  X(cuGraphGetNodes, 10000)                            \
  X(cuGraphInstantiateWithFlags, 11040)                \
  X(cuGraphLaunch, 10000)                              \
  X(cuGraphDestroy, 10000)                             \
  X(cuGraphExecDestroy, 10000)                         \
  X(cuLaunchKernelEx, 11060)                           \
  X(cuFuncGetName, 12030)                              \
  X(cuModuleGetFunctionCount, 12040)                   \
  X(cuModuleEnumerateFunctions, 12040)                 \
  X(cuOccupancyMaxActiveBlocksPerMultiprocessor, 6050) \
  X(cuOccupancyAvailableDynamicSMemPerBlock, 10020)    \
  X(cuOccupancyMaxPotentialClusterSize, 11070)         \
  X(cuOccupancyMaxActiveClusters, 11070)               \
  X(cuLaunchHostFunc, 10000)                           \
  X(cuStreamIsCapturing, 10000)                        \
  X(cuGraphUpload, 11010)                              \
  X(cuGraphNodeGetType, 10000)                         \
  X(cuGraphKernelNodeGetParams, 12000)                 \
  X(cuGraphExecKernelNodeSetParams, 12000)             \
  X(cuGraphExecUpdate, 12000)                          \
  X(cuMemAllocAsync, 11020)                            \
  X(cuMemAllocFromPoolAsync, 11020)                    \
  X(cuMemFreeAsync, 11020)                             \
  X(cuDeviceGetDefaultMemPool, 11020)                  \
  X(cuMemPoolCreate, 11020)                            \
  X(cuMemPoolDestroy, 11020)                           \
  X(cuMemPoolSetAttribute, 11020)                      \
  X(cuMemPoolGetAttribute, 11020)                      \
  X(cuMemPoolTrimTo, 11020)                            \
  X(cuMemPoolExportToShareableHandle, 11020)           \
  X(cuMemPoolImportFromShareableHandle, 11020)         \
  X(cuMemPoolExportPointer, 11020)                     \
  X(cuMemPoolImportPointer, 11020)                     \
  X(cuMemAllocManaged, 6000)                           \
  X(cuMemPrefetchAsync, 12020)                         \
  X(cuMemAdvise, 12020)                                \
  X(cuMemGetAddressRange, 3020)                        \
  X(cuIpcGetMemHandle, 4010)                           \
  X(cuIpcOpenMemHandle, 11000)                         \
  X(cuIpcCloseMemHandle, 4010)                         \
  X(cuIpcGetEventHandle, 4010)                         \
  X(cuIpcOpenEventHandle, 4010)                        \
  X(cuDeviceCanAccessPeer, 4000)                       \
  X(cuCtxEnablePeerAccess, 4000)                       \
  X(cuCtxDisablePeerAccess, 4000)                      \
  X(cuDeviceGetP2PAttribute, 8000)                     \
  X(cuMemcpyPeer, 4000)                                \
  X(cuMemcpyPeerAsync, 4000)                           \
  X(cuMemAllocPitch, 3020)                             \
  X(cuMemsetD16, 3020)                                 \
  X(cuMemsetD16Async, 3020)                            \
  X(cuMemsetD32, 3020)                                 \
  X(cuMemsetD32Async, 3020)                            \
  X(cuMemcpy3D, 3020)                                  \
  X(cuMemcpy3DAsync, 3020)                             \
  X(cuArray3DCreate, 3020)                             \
  X(cuArrayDestroy, 2000)                              \
  X(cuTexObjectCreate, 5000)                           \
  X(cuTexObjectDestroy, 5000)                          \
  X(cuSurfObjectCreate, 5000)                          \
  X(cuSurfObjectDestroy, 5000)                         \
  X(cuLinkCreate, 6050)                                \
  X(cuLinkAddData, 6050)                               \
  X(cuLinkComplete, 5050)                              \
  X(cuLinkDestroy, 5050)                               \
  X(cuLibraryLoadData, 12000)                          \
  X(cuLibraryUnload, 12000)                            \
  X(cuLibraryGetModule, 12000)                         \
  /* virtual memory */                                 \
  X(cuMemGetAllocationGranularity, 10020)              \
  X(cuMemAddressReserve, 10020)                        \
  X(cuMemAddressFree, 10020)                           \
  X(cuMemCreate, 10020)                                \
  X(cuMemRelease, 10020)                               \
  X(cuMemMap, 10020)                                   \
  X(cuMemUnmap, 10020)                                 \
  X(cuMemSetAccess, 10020)                             \
  X(cuMemExportToShareableHandle, 10020)               \
  X(cuMemImportFromShareableHandle, 10020)             \
  X(cuMemGetAllocationPropertiesFromHandle, 10020)     \
  /* green contexts */                                 \
  X(cuDeviceGetDevResource, 12040)                     \
  X(cuDevSmResourceSplitByCount, 12040)                \
  X(cuDevResourceGenerateDesc, 12040)                  \
  X(cuGreenCtxCreate, 12040)                           \
  X(cuGreenCtxDestroy, 12040)                          \
  X(cuGreenCtxGetDevResource, 12040)                   \
  X(cuGreenCtxStreamCreate, 12050)                     \
  /* tensor maps */                                    \
  X(cuTensorMapEncodeTiled, 12000)                     \
  X(cuTensorMapEncodeIm2col, 12000)                    \
  X(cuTensorMapReplaceAddress, 12000)                  \
  /* graphs built node by node */                      \
  X(cuGraphCreate, 10000)                              \
  X(cuGraphAddEmptyNode, 10000)                        \
  X(cuGraphAddKernelNode, 12000)                       \
  X(cuGraphKernelNodeSetAttribute, 11000)              \
  X(cuGraphAddMemcpyNode, 10000)                       \
  X(cuGraphAddMemsetNode, 10000)                       \
  X(cuGraphAddHostNode, 10000)                         \
  X(cuGraphAddEventRecordNode, 11010)                  \
  X(cuGraphAddEventWaitNode, 11010)                    \
  X(cuGraphAddChildGraphNode, 10000)                   \
  X(cuGraphAddMemAllocNode, 11040)                     \
  X(cuGraphAddMemFreeNode, 11040)                      \
  X(cuGraphAddDependencies, 10000)                     \
  X(cuGraphNodeGetDependencies, 10000)                 \
  X(cuGraphNodeGetDependentNodes, 10000)               \
  X(cuGraphClone, 10000)                               \
  X(cuGraphNodeFindInClone, 10000)                     \
  X(cuStreamBeginCaptureToGraph, 12030)                \
  X(cuGraphDebugDotPrint, 11030)                       \
  X(cuGraphConditionalHandleCreate, 12030)             \
  X(cuGraphAddNode, 12020)                             \
  X(cuGraphInstantiateWithParams, 12000)               \
  X(cuGraphMemcpyNodeGetParams, 10000)                 \
  X(cuGraphExecMemcpyNodeSetParams, 10020)             \
  X(cuGraphExecMemsetNodeSetParams, 10020)             \
  X(cuGraphExecHostNodeSetParams, 10020)               \
  X(cuGraphExecEventRecordNodeSetEvent, 11010)         \
  X(cuGraphExecEventWaitNodeSetEvent, 11010)           \
  X(cuGraphNodeSetEnabled, 11060)                      \
  X(cuGraphNodeGetEnabled, 11060)

#endif /* CUABI_CORE_DRIVER_ENTRY_POINTS_H */
