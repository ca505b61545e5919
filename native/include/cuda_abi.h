/* Our own declarations of the part of the CUDA driver API that gpushare
 * touches. Written from NVIDIA's documented ABI so nothing needs cuda.h at
 * build time. Shared by the simulated driver (native/fakegpu, implementer)
 * and the preload interposer (caller and re-exporter); keep every layout
 * byte-exact with the real driver. */
#ifndef GPUSHARE_CUDA_ABI_H
#define GPUSHARE_CUDA_ABI_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef int CUresult;
typedef int CUdevice;
typedef unsigned long long CUdeviceptr; /* CUdeviceptr_v2 */
typedef unsigned long long cuuint64_t;
typedef struct CUctx_st *CUcontext;
typedef struct CUstream_st *CUstream;
typedef struct CUmod_st *CUmodule;
typedef struct CUfunc_st *CUfunction;
typedef struct CUmemPoolHandle_st *CUmemoryPool;
typedef struct CUgraphExec_st *CUgraphExec;
typedef struct CUgraph_st *CUgraph;
typedef struct CUgraphNode_st *CUgraphNode;
typedef struct CUarray_st *CUarray;
typedef struct CUmipmappedArray_st *CUmipmappedArray;
typedef unsigned long long CUmemGenericAllocationHandle;

/* Special stream handles */
#define CU_STREAM_LEGACY ((CUstream)0x1)
#define CU_STREAM_PER_THREAD ((CUstream)0x2)

enum {
  CUDA_SUCCESS = 0,
  CUDA_ERROR_INVALID_VALUE = 1,
  CUDA_ERROR_OUT_OF_MEMORY = 2,
  CUDA_ERROR_NOT_INITIALIZED = 3,
  CUDA_ERROR_DEINITIALIZED = 4,
  CUDA_ERROR_DEVICE_UNAVAILABLE = 46,
  CUDA_ERROR_NO_DEVICE = 100,
  CUDA_ERROR_INVALID_DEVICE = 101,
  CUDA_ERROR_INVALID_IMAGE = 200,
  CUDA_ERROR_INVALID_CONTEXT = 201,
  CUDA_ERROR_CONTEXT_ALREADY_IN_USE = 216,
  CUDA_ERROR_OPERATING_SYSTEM = 304,
  CUDA_ERROR_INVALID_HANDLE = 400,
  CUDA_ERROR_ILLEGAL_STATE = 401,
  CUDA_ERROR_NOT_FOUND = 500,
  CUDA_ERROR_NOT_READY = 600,
  CUDA_ERROR_LAUNCH_FAILED = 719,
  CUDA_ERROR_NOT_PERMITTED = 800,
  CUDA_ERROR_NOT_SUPPORTED = 801,
  CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED = 900,
  CUDA_ERROR_STREAM_CAPTURE_INVALIDATED = 901,
  CUDA_ERROR_STREAM_CAPTURE_WRONG_THREAD = 908,
  CUDA_ERROR_TIMEOUT = 909,
  CUDA_ERROR_UNKNOWN = 999
};

typedef struct CUuuid_st {
  char bytes[16];
} CUuuid;

/* CUdevice_attribute (the ones the simulated driver answers; others are 0) */
typedef int CUdevice_attribute;
enum {
  CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK = 1,
  CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_X = 2,
  CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X = 5,
  CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK = 8,
  CU_DEVICE_ATTRIBUTE_WARP_SIZE = 10,
  CU_DEVICE_ATTRIBUTE_CLOCK_RATE = 13,
  CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT = 16,
  CU_DEVICE_ATTRIBUTE_INTEGRATED = 18,
  CU_DEVICE_ATTRIBUTE_COMPUTE_MODE = 20,
  CU_DEVICE_ATTRIBUTE_CONCURRENT_KERNELS = 31,
  CU_DEVICE_ATTRIBUTE_ECC_ENABLED = 32,
  CU_DEVICE_ATTRIBUTE_PCI_BUS_ID = 33,
  CU_DEVICE_ATTRIBUTE_PCI_DEVICE_ID = 34,
  CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE = 36,
  CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH = 37,
  CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE = 38,
  CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR = 39,
  CU_DEVICE_ATTRIBUTE_UNIFIED_ADDRESSING = 41,
  CU_DEVICE_ATTRIBUTE_PCI_DOMAIN_ID = 50,
  CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR = 75,
  CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR = 76,
  CU_DEVICE_ATTRIBUTE_MANAGED_MEMORY = 83,
  CU_DEVICE_ATTRIBUTE_COOPERATIVE_LAUNCH = 95,
  CU_DEVICE_ATTRIBUTE_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED = 102,
  CU_DEVICE_ATTRIBUTE_MEMORY_POOLS_SUPPORTED = 115,
  CU_DEVICE_ATTRIBUTE_MAX = 150
};

/* cuGetProcAddress */
enum {
  CU_GET_PROC_ADDRESS_DEFAULT = 0,
  CU_GET_PROC_ADDRESS_LEGACY_STREAM = 1 << 0,
  CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM = 1 << 1
};
typedef enum CUdriverProcAddressQueryResult_enum {
  CU_GET_PROC_ADDRESS_SUCCESS = 0,
  CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND = 1,
  CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT = 2
} CUdriverProcAddressQueryResult;

/* Virtual memory management */
typedef enum CUmemAllocationType_enum {
  CU_MEM_ALLOCATION_TYPE_INVALID = 0x0,
  CU_MEM_ALLOCATION_TYPE_PINNED = 0x1
} CUmemAllocationType;
typedef enum CUmemAllocationHandleType_enum {
  CU_MEM_HANDLE_TYPE_NONE = 0x0,
  CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR = 0x1
} CUmemAllocationHandleType;
typedef enum CUmemLocationType_enum {
  CU_MEM_LOCATION_TYPE_INVALID = 0x0,
  CU_MEM_LOCATION_TYPE_DEVICE = 0x1,
  CU_MEM_LOCATION_TYPE_HOST = 0x2,
  CU_MEM_LOCATION_TYPE_HOST_NUMA = 0x3,
  CU_MEM_LOCATION_TYPE_HOST_NUMA_CURRENT = 0x4
} CUmemLocationType;
typedef enum CUmemAccess_flags_enum {
  CU_MEM_ACCESS_FLAGS_PROT_NONE = 0x0,
  CU_MEM_ACCESS_FLAGS_PROT_READ = 0x1,
  CU_MEM_ACCESS_FLAGS_PROT_READWRITE = 0x3
} CUmemAccess_flags;

typedef struct CUmemLocation_st {
  CUmemLocationType type;
  int id; /* device ordinal when type == CU_MEM_LOCATION_TYPE_DEVICE */
} CUmemLocation;

/* 32 bytes on LP64, as in cuda.h (CUmemAllocationProp_v1) */
typedef struct CUmemAllocationProp_st {
  CUmemAllocationType type;
  CUmemAllocationHandleType requestedHandleTypes;
  CUmemLocation location;
  void *win32HandleMetaData;
  struct {
    unsigned char compressionType;
    unsigned char gpuDirectRDMACapable;
    unsigned short usage;
    unsigned char reserved[4];
  } allocFlags;
} CUmemAllocationProp;

typedef struct CUmemAccessDesc_st {
  CUmemLocation location;
  CUmemAccess_flags flags;
} CUmemAccessDesc;

/* 88 bytes on LP64 (CUmemPoolProps_v1) */
typedef struct CUmemPoolProps_st {
  CUmemAllocationType allocType;
  CUmemAllocationHandleType handleTypes;
  CUmemLocation location;
  void *win32SecurityAttributes;
  size_t maxSize;
  unsigned short usage;
  unsigned char reserved[54];
} CUmemPoolProps;

/* cuLaunchKernelEx: CUlaunchAttribute is 72 bytes (id, pad, 64-byte value
 * union); CUlaunchConfig is 56 bytes on LP64. */
typedef int CUlaunchAttributeID;
enum { CU_LAUNCH_ATTRIBUTE_COOPERATIVE = 2 };
typedef union CUlaunchAttributeValue_union {
  char pad[64];
  int cooperative;
  void *alignAsPointer_; /* the real union holds pointers (8-byte aligned) */
} CUlaunchAttributeValue;
typedef struct CUlaunchAttribute_st {
  CUlaunchAttributeID id;
  char pad[8 - sizeof(CUlaunchAttributeID)];
  CUlaunchAttributeValue value;
} CUlaunchAttribute;
typedef struct CUlaunchConfig_st {
  unsigned int gridDimX;
  unsigned int gridDimY;
  unsigned int gridDimZ;
  unsigned int blockDimX;
  unsigned int blockDimY;
  unsigned int blockDimZ;
  unsigned int sharedMemBytes;
  CUstream hStream;
  CUlaunchAttribute *attrs;
  unsigned int numAttrs;
} CUlaunchConfig;

/* Stream capture (CUDA 10+) */
typedef enum CUstreamCaptureMode_enum {
  CU_STREAM_CAPTURE_MODE_GLOBAL = 0,
  CU_STREAM_CAPTURE_MODE_THREAD_LOCAL = 1,
  CU_STREAM_CAPTURE_MODE_RELAXED = 2
} CUstreamCaptureMode;
typedef enum CUstreamCaptureStatus_enum {
  CU_STREAM_CAPTURE_STATUS_NONE = 0,
  CU_STREAM_CAPTURE_STATUS_ACTIVE = 1,
  CU_STREAM_CAPTURE_STATUS_INVALIDATED = 2
} CUstreamCaptureStatus;
/* 8 bytes (CUgraphEdgeData_st, CUDA 12.3) */
typedef struct CUgraphEdgeData_st {
  unsigned char from_port;
  unsigned char to_port;
  unsigned char type;
  unsigned char reserved[5];
} CUgraphEdgeData;

/* Graph memory nodes: 120 bytes on LP64 (CUDA_MEM_ALLOC_NODE_PARAMS_v1); dptr is written back */
typedef struct CUDA_MEM_ALLOC_NODE_PARAMS_st {
  CUmemPoolProps poolProps;
  const CUmemAccessDesc *accessDescs;
  size_t accessDescCount;
  size_t bytesize;
  CUdeviceptr dptr;
} CUDA_MEM_ALLOC_NODE_PARAMS;

/* Arrays (CUarray_format: the plain element formats) */
typedef enum CUarray_format_enum {
  CU_AD_FORMAT_UNSIGNED_INT8 = 0x01,
  CU_AD_FORMAT_UNSIGNED_INT16 = 0x02,
  CU_AD_FORMAT_UNSIGNED_INT32 = 0x03,
  CU_AD_FORMAT_SIGNED_INT8 = 0x08,
  CU_AD_FORMAT_SIGNED_INT16 = 0x09,
  CU_AD_FORMAT_SIGNED_INT32 = 0x0a,
  CU_AD_FORMAT_HALF = 0x10,
  CU_AD_FORMAT_FLOAT = 0x20
} CUarray_format;
/* 24 bytes on LP64 (CUDA_ARRAY_DESCRIPTOR_v2) */
typedef struct CUDA_ARRAY_DESCRIPTOR_st {
  size_t Width;
  size_t Height;
  CUarray_format Format;
  unsigned int NumChannels;
} CUDA_ARRAY_DESCRIPTOR;
/* 40 bytes on LP64 (CUDA_ARRAY3D_DESCRIPTOR_v2) */
typedef struct CUDA_ARRAY3D_DESCRIPTOR_st {
  size_t Width;
  size_t Height;
  size_t Depth;
  CUarray_format Format;
  unsigned int NumChannels;
  unsigned int Flags;
} CUDA_ARRAY3D_DESCRIPTOR;

/* 2D/3D copies: where each side lives (CUmemorytype) and the rectangle or box moved */
typedef enum CUmemorytype_enum {
  CU_MEMORYTYPE_HOST = 0x01,
  CU_MEMORYTYPE_DEVICE = 0x02,
  CU_MEMORYTYPE_ARRAY = 0x03,
  CU_MEMORYTYPE_UNIFIED = 0x04
} CUmemorytype;
/* 128 bytes on LP64 (CUDA_MEMCPY2D_v2) */
typedef struct CUDA_MEMCPY2D_st {
  size_t srcXInBytes;
  size_t srcY;
  CUmemorytype srcMemoryType;
  const void *srcHost;
  CUdeviceptr srcDevice;
  CUarray srcArray;
  size_t srcPitch;
  size_t dstXInBytes;
  size_t dstY;
  CUmemorytype dstMemoryType;
  void *dstHost;
  CUdeviceptr dstDevice;
  CUarray dstArray;
  size_t dstPitch;
  size_t WidthInBytes;
  size_t Height;
} CUDA_MEMCPY2D;
/* 200 bytes on LP64 (CUDA_MEMCPY3D_v2) */
typedef struct CUDA_MEMCPY3D_st {
  size_t srcXInBytes;
  size_t srcY;
  size_t srcZ;
  size_t srcLOD;
  CUmemorytype srcMemoryType;
  const void *srcHost;
  CUdeviceptr srcDevice;
  CUarray srcArray;
  void *reserved0;
  size_t srcPitch;
  size_t srcHeight;
  size_t dstXInBytes;
  size_t dstY;
  size_t dstZ;
  size_t dstLOD;
  CUmemorytype dstMemoryType;
  void *dstHost;
  CUdeviceptr dstDevice;
  CUarray dstArray;
  void *reserved1;
  size_t dstPitch;
  size_t dstHeight;
  size_t WidthInBytes;
  size_t Height;
  size_t Depth;
} CUDA_MEMCPY3D;
/* 200 bytes on LP64 (CUDA_MEMCPY3D_PEER_v1): CUDA_MEMCPY3D with each side's context */
typedef struct CUDA_MEMCPY3D_PEER_st {
  size_t srcXInBytes;
  size_t srcY;
  size_t srcZ;
  size_t srcLOD;
  CUmemorytype srcMemoryType;
  const void *srcHost;
  CUdeviceptr srcDevice;
  CUarray srcArray;
  CUcontext srcContext;
  size_t srcPitch;
  size_t srcHeight;
  size_t dstXInBytes;
  size_t dstY;
  size_t dstZ;
  size_t dstLOD;
  CUmemorytype dstMemoryType;
  void *dstHost;
  CUdeviceptr dstDevice;
  CUarray dstArray;
  CUcontext dstContext;
  size_t dstPitch;
  size_t dstHeight;
  size_t WidthInBytes;
  size_t Height;
  size_t Depth;
} CUDA_MEMCPY3D_PEER;
#define CU_DEVICE_CPU ((CUdevice)-1) /* cuMemPrefetchAsync: to host memory */

/* Batched copies (CUDA 12.8): cuMemcpyBatchAsync moves count pointer-to-pointer copies, each with
 * the attributes of the attrs entry whose attrsIdxs range holds it; cuMemcpy3DBatchAsync moves
 * boxes between pointers and arrays. Layouts as in cuda.h of CUDA 12.8/13.0. */
typedef enum CUmemcpySrcAccessOrder_enum {
  CU_MEMCPY_SRC_ACCESS_ORDER_INVALID = 0x0,
  CU_MEMCPY_SRC_ACCESS_ORDER_STREAM = 0x1,
  CU_MEMCPY_SRC_ACCESS_ORDER_DURING_API_CALL = 0x2,
  CU_MEMCPY_SRC_ACCESS_ORDER_ANY = 0x3,
  CU_MEMCPY_SRC_ACCESS_ORDER_MAX = 0x7FFFFFFF
} CUmemcpySrcAccessOrder;
#define CU_MEMCPY_FLAG_PREFER_OVERLAP_WITH_COMPUTE 0x1
/* 24 bytes (CUmemcpyAttributes_v1) */
typedef struct CUmemcpyAttributes_st {
  CUmemcpySrcAccessOrder srcAccessOrder;
  CUmemLocation srcLocHint;
  CUmemLocation dstLocHint;
  unsigned int flags; /* CU_MEMCPY_FLAG_* */
} CUmemcpyAttributes;
typedef enum CUmemcpy3DOperandType_enum {
  CU_MEMCPY_OPERAND_TYPE_POINTER = 0x1,
  CU_MEMCPY_OPERAND_TYPE_ARRAY = 0x2,
  CU_MEMCPY_OPERAND_TYPE_MAX = 0x7FFFFFFF
} CUmemcpy3DOperandType;
typedef struct CUoffset3D_st {
  size_t x, y, z;
} CUoffset3D;
typedef struct CUextent3D_st {
  size_t width, height, depth;
} CUextent3D;
/* 40 bytes (CUmemcpy3DOperand_v1): a pointer with its row length and layer height (in elements), or an array and an offset */
typedef struct CUmemcpy3DOperand_st {
  CUmemcpy3DOperandType type;
  union {
    struct {
      CUdeviceptr ptr;
      size_t rowLength;
      size_t layerHeight;
      CUmemLocation locHint;
    } ptr;
    struct {
      CUarray array;
      CUoffset3D offset;
    } array;
  } op;
} CUmemcpy3DOperand;
/* 112 bytes (CUDA_MEMCPY3D_BATCH_OP_v1) */
typedef struct CUDA_MEMCPY3D_BATCH_OP_st {
  CUmemcpy3DOperand src;
  CUmemcpy3DOperand dst;
  CUextent3D extent;
  CUmemcpySrcAccessOrder srcAccessOrder;
  unsigned int flags;
} CUDA_MEMCPY3D_BATCH_OP;

/* Process checkpointing (CUDA 12.8, driver 570+). Called by ANOTHER process
 * on the target pid. Every args struct is 64 bytes; args may be NULL and
 * reserved fields must be zero. Layouts as in cuda.h of CUDA 13.0. */
typedef enum CUprocessState_enum {
  CU_PROCESS_STATE_RUNNING = 0,
  CU_PROCESS_STATE_LOCKED = 1,       /* CUDA API calls of the process block */
  CU_PROCESS_STATE_CHECKPOINTED = 2, /* device memory is in host memory, device handles released */
  CU_PROCESS_STATE_FAILED = 3
} CUprocessState;

typedef struct CUcheckpointLockArgs_st {
  unsigned int timeoutMs; /* 0: no timeout; on timeout the process stays RUNNING */
  unsigned int reserved0;
  cuuint64_t reserved1[7];
} CUcheckpointLockArgs;

typedef struct CUcheckpointCheckpointArgs_st {
  cuuint64_t reserved[8];
} CUcheckpointCheckpointArgs;

typedef struct CUcheckpointGpuPair_st {
  CUuuid oldUuid;
  CUuuid newUuid;
} CUcheckpointGpuPair;

/* CUDA 12.8 declared this as cuuint64_t reserved[8]; 13.0 put the remap
 * pairs in its first bytes. Same size, and all zero means "same GPUs". */
typedef struct CUcheckpointRestoreArgs_st {
  CUcheckpointGpuPair *gpuPairs;
  unsigned int gpuPairsCount;
  char reserved[52 - sizeof(CUcheckpointGpuPair *)];
  cuuint64_t reserved1;
} CUcheckpointRestoreArgs;

typedef struct CUcheckpointUnlockArgs_st {
  cuuint64_t reserved[8];
} CUcheckpointUnlockArgs;

#ifdef __cplusplus
#define GPUSHARE_CUDA_ABI_ASSERT(cond, msg) static_assert(cond, msg)
#else
#define GPUSHARE_CUDA_ABI_ASSERT(cond, msg) _Static_assert(cond, msg)
#endif
GPUSHARE_CUDA_ABI_ASSERT(sizeof(CUcheckpointLockArgs) == 64, "CUcheckpointLockArgs is 64 bytes");
GPUSHARE_CUDA_ABI_ASSERT(sizeof(CUcheckpointCheckpointArgs) == 64, "CUcheckpointCheckpointArgs is 64 bytes");
GPUSHARE_CUDA_ABI_ASSERT(sizeof(CUcheckpointGpuPair) == 32, "CUcheckpointGpuPair is 32 bytes");
GPUSHARE_CUDA_ABI_ASSERT(sizeof(CUcheckpointRestoreArgs) == 64, "CUcheckpointRestoreArgs is 64 bytes on LP64");
GPUSHARE_CUDA_ABI_ASSERT(offsetof(CUcheckpointRestoreArgs, reserved1) == 56, "CUcheckpointRestoreArgs.reserved1 at 56");
GPUSHARE_CUDA_ABI_ASSERT(sizeof(CUcheckpointUnlockArgs) == 64, "CUcheckpointUnlockArgs is 64 bytes");
GPUSHARE_CUDA_ABI_ASSERT(sizeof(CUDA_MEM_ALLOC_NODE_PARAMS) == 120, "CUDA_MEM_ALLOC_NODE_PARAMS is 120 bytes on LP64");
GPUSHARE_CUDA_ABI_ASSERT(sizeof(CUDA_ARRAY_DESCRIPTOR) == 24, "CUDA_ARRAY_DESCRIPTOR is 24 bytes on LP64");
GPUSHARE_CUDA_ABI_ASSERT(sizeof(CUDA_ARRAY3D_DESCRIPTOR) == 40, "CUDA_ARRAY3D_DESCRIPTOR is 40 bytes on LP64");
GPUSHARE_CUDA_ABI_ASSERT(sizeof(CUgraphEdgeData) == 8, "CUgraphEdgeData is 8 bytes");
GPUSHARE_CUDA_ABI_ASSERT(sizeof(CUDA_MEMCPY2D) == 128, "CUDA_MEMCPY2D is 128 bytes on LP64");
GPUSHARE_CUDA_ABI_ASSERT(offsetof(CUDA_MEMCPY2D, WidthInBytes) == 112, "CUDA_MEMCPY2D.WidthInBytes at 112");
GPUSHARE_CUDA_ABI_ASSERT(sizeof(CUDA_MEMCPY3D) == 200, "CUDA_MEMCPY3D is 200 bytes on LP64");
GPUSHARE_CUDA_ABI_ASSERT(offsetof(CUDA_MEMCPY3D, dstXInBytes) == 88, "CUDA_MEMCPY3D.dstXInBytes at 88");
GPUSHARE_CUDA_ABI_ASSERT(sizeof(CUDA_MEMCPY3D_PEER) == 200, "CUDA_MEMCPY3D_PEER is 200 bytes on LP64");
GPUSHARE_CUDA_ABI_ASSERT(offsetof(CUDA_MEMCPY3D_PEER, dstContext) == offsetof(CUDA_MEMCPY3D, reserved1), "CUDA_MEMCPY3D_PEER.dstContext");
GPUSHARE_CUDA_ABI_ASSERT(sizeof(CUmemcpyAttributes) == 24, "CUmemcpyAttributes is 24 bytes");
GPUSHARE_CUDA_ABI_ASSERT(sizeof(CUmemcpy3DOperand) == 40, "CUmemcpy3DOperand is 40 bytes on LP64");
GPUSHARE_CUDA_ABI_ASSERT(sizeof(CUDA_MEMCPY3D_BATCH_OP) == 112, "CUDA_MEMCPY3D_BATCH_OP is 112 bytes on LP64");
GPUSHARE_CUDA_ABI_ASSERT(offsetof(CUDA_MEMCPY3D_BATCH_OP, srcAccessOrder) == 104, "CUDA_MEMCPY3D_BATCH_OP.srcAccessOrder at 104");
#undef GPUSHARE_CUDA_ABI_ASSERT

/* Every entry point: X(exported symbol, parameter list). The real driver
 * exports each of these names with exactly this signature. */
#define GPUSHARE_CUDA_FUNCS(X) \
  X(cuInit, (unsigned int Flags)) \
  X(cuDriverGetVersion, (int *driverVersion)) \
  X(cuDeviceGetCount, (int *count)) \
  X(cuDeviceGet, (CUdevice *device, int ordinal)) \
  X(cuDeviceGetName, (char *name, int len, CUdevice dev)) \
  X(cuDeviceGetUuid, (CUuuid *uuid, CUdevice dev)) \
  X(cuDeviceGetUuid_v2, (CUuuid *uuid, CUdevice dev)) \
  X(cuDeviceTotalMem_v2, (size_t *bytes, CUdevice dev)) \
  X(cuDeviceGetAttribute, (int *pi, CUdevice_attribute attrib, CUdevice dev)) \
  X(cuDevicePrimaryCtxRetain, (CUcontext *pctx, CUdevice dev)) \
  X(cuDevicePrimaryCtxRelease, (CUdevice dev)) \
  X(cuDevicePrimaryCtxRelease_v2, (CUdevice dev)) \
  X(cuCtxCreate_v2, (CUcontext *pctx, unsigned int flags, CUdevice dev)) \
  X(cuCtxDestroy_v2, (CUcontext ctx)) \
  X(cuCtxSetCurrent, (CUcontext ctx)) \
  X(cuCtxGetCurrent, (CUcontext *pctx)) \
  X(cuCtxSynchronize, (void)) \
  X(cuMemGetInfo_v2, (size_t *free, size_t *total)) \
  X(cuMemAlloc_v2, (CUdeviceptr *dptr, size_t bytesize)) \
  X(cuMemAllocPitch_v2, (CUdeviceptr *dptr, size_t *pPitch, size_t WidthInBytes, size_t Height, unsigned int ElementSizeBytes)) \
  X(cuMemAllocManaged, (CUdeviceptr *dptr, size_t bytesize, unsigned int flags)) \
  X(cuMemFree_v2, (CUdeviceptr dptr)) \
  X(cuMemAllocAsync, (CUdeviceptr *dptr, size_t bytesize, CUstream hStream)) \
  X(cuMemAllocAsync_ptsz, (CUdeviceptr *dptr, size_t bytesize, CUstream hStream)) \
  X(cuMemFreeAsync, (CUdeviceptr dptr, CUstream hStream)) \
  X(cuMemFreeAsync_ptsz, (CUdeviceptr dptr, CUstream hStream)) \
  X(cuMemPoolCreate, (CUmemoryPool *pool, const CUmemPoolProps *poolProps)) \
  X(cuMemPoolDestroy, (CUmemoryPool pool)) \
  X(cuMemAllocFromPoolAsync, (CUdeviceptr *dptr, size_t bytesize, CUmemoryPool pool, CUstream hStream)) \
  X(cuMemAllocFromPoolAsync_ptsz, (CUdeviceptr *dptr, size_t bytesize, CUmemoryPool pool, CUstream hStream)) \
  X(cuDeviceGetDefaultMemPool, (CUmemoryPool *pool_out, CUdevice dev)) \
  X(cuMemCreate, (CUmemGenericAllocationHandle *handle, size_t size, const CUmemAllocationProp *prop, unsigned long long flags)) \
  X(cuMemRelease, (CUmemGenericAllocationHandle handle)) \
  X(cuMemAddressReserve, (CUdeviceptr *ptr, size_t size, size_t alignment, CUdeviceptr addr, unsigned long long flags)) \
  X(cuMemAddressFree, (CUdeviceptr ptr, size_t size)) \
  X(cuMemMap, (CUdeviceptr ptr, size_t size, size_t offset, CUmemGenericAllocationHandle handle, unsigned long long flags)) \
  X(cuMemUnmap, (CUdeviceptr ptr, size_t size)) \
  X(cuMemSetAccess, (CUdeviceptr ptr, size_t size, const CUmemAccessDesc *desc, size_t count)) \
  X(cuMemcpyHtoD_v2, (CUdeviceptr dstDevice, const void *srcHost, size_t ByteCount)) \
  X(cuMemcpyDtoH_v2, (void *dstHost, CUdeviceptr srcDevice, size_t ByteCount)) \
  X(cuMemcpyDtoD_v2, (CUdeviceptr dstDevice, CUdeviceptr srcDevice, size_t ByteCount)) \
  X(cuMemsetD8_v2, (CUdeviceptr dstDevice, unsigned char uc, size_t N)) \
  X(cuMemsetD32_v2, (CUdeviceptr dstDevice, unsigned int ui, size_t N)) \
  X(cuMemcpyHtoD_v2_ptds, (CUdeviceptr dstDevice, const void *srcHost, size_t ByteCount)) \
  X(cuMemcpyDtoH_v2_ptds, (void *dstHost, CUdeviceptr srcDevice, size_t ByteCount)) \
  X(cuMemcpyDtoD_v2_ptds, (CUdeviceptr dstDevice, CUdeviceptr srcDevice, size_t ByteCount)) \
  X(cuMemsetD8_v2_ptds, (CUdeviceptr dstDevice, unsigned char uc, size_t N)) \
  X(cuMemsetD32_v2_ptds, (CUdeviceptr dstDevice, unsigned int ui, size_t N)) \
  X(cuMemcpy, (CUdeviceptr dst, CUdeviceptr src, size_t ByteCount)) \
  X(cuMemcpy_ptds, (CUdeviceptr dst, CUdeviceptr src, size_t ByteCount)) \
  X(cuMemcpyAsync, (CUdeviceptr dst, CUdeviceptr src, size_t ByteCount, CUstream hStream)) \
  X(cuMemcpyAsync_ptsz, (CUdeviceptr dst, CUdeviceptr src, size_t ByteCount, CUstream hStream)) \
  X(cuMemcpyHtoDAsync_v2, (CUdeviceptr dstDevice, const void *srcHost, size_t ByteCount, CUstream hStream)) \
  X(cuMemcpyHtoDAsync_v2_ptsz, (CUdeviceptr dstDevice, const void *srcHost, size_t ByteCount, CUstream hStream)) \
  X(cuMemcpyDtoHAsync_v2, (void *dstHost, CUdeviceptr srcDevice, size_t ByteCount, CUstream hStream)) \
  X(cuMemcpyDtoHAsync_v2_ptsz, (void *dstHost, CUdeviceptr srcDevice, size_t ByteCount, CUstream hStream)) \
  X(cuMemcpyDtoDAsync_v2, (CUdeviceptr dstDevice, CUdeviceptr srcDevice, size_t ByteCount, CUstream hStream)) \
  X(cuMemcpyDtoDAsync_v2_ptsz, (CUdeviceptr dstDevice, CUdeviceptr srcDevice, size_t ByteCount, CUstream hStream)) \
  X(cuMemsetD8Async, (CUdeviceptr dstDevice, unsigned char uc, size_t N, CUstream hStream)) \
  X(cuMemsetD8Async_ptsz, (CUdeviceptr dstDevice, unsigned char uc, size_t N, CUstream hStream)) \
  X(cuMemsetD32Async, (CUdeviceptr dstDevice, unsigned int ui, size_t N, CUstream hStream)) \
  X(cuMemsetD32Async_ptsz, (CUdeviceptr dstDevice, unsigned int ui, size_t N, CUstream hStream)) \
  X(cuMemcpy2D_v2, (const CUDA_MEMCPY2D *pCopy)) \
  X(cuMemcpy2D_v2_ptds, (const CUDA_MEMCPY2D *pCopy)) \
  X(cuMemcpy2DUnaligned_v2, (const CUDA_MEMCPY2D *pCopy)) \
  X(cuMemcpy2DUnaligned_v2_ptds, (const CUDA_MEMCPY2D *pCopy)) \
  X(cuMemcpy2DAsync_v2, (const CUDA_MEMCPY2D *pCopy, CUstream hStream)) \
  X(cuMemcpy2DAsync_v2_ptsz, (const CUDA_MEMCPY2D *pCopy, CUstream hStream)) \
  X(cuMemcpy3D_v2, (const CUDA_MEMCPY3D *pCopy)) \
  X(cuMemcpy3D_v2_ptds, (const CUDA_MEMCPY3D *pCopy)) \
  X(cuMemcpy3DAsync_v2, (const CUDA_MEMCPY3D *pCopy, CUstream hStream)) \
  X(cuMemcpy3DAsync_v2_ptsz, (const CUDA_MEMCPY3D *pCopy, CUstream hStream)) \
  X(cuMemcpyPeer, (CUdeviceptr dstDevice, CUcontext dstContext, CUdeviceptr srcDevice, CUcontext srcContext, size_t ByteCount)) \
  X(cuMemcpyPeer_ptds, (CUdeviceptr dstDevice, CUcontext dstContext, CUdeviceptr srcDevice, CUcontext srcContext, size_t ByteCount)) \
  X(cuMemcpyPeerAsync, (CUdeviceptr dstDevice, CUcontext dstContext, CUdeviceptr srcDevice, CUcontext srcContext, size_t ByteCount, CUstream hStream)) \
  X(cuMemcpyPeerAsync_ptsz, (CUdeviceptr dstDevice, CUcontext dstContext, CUdeviceptr srcDevice, CUcontext srcContext, size_t ByteCount, CUstream hStream)) \
  X(cuMemcpy3DPeer, (const CUDA_MEMCPY3D_PEER *pCopy)) \
  X(cuMemcpy3DPeer_ptds, (const CUDA_MEMCPY3D_PEER *pCopy)) \
  X(cuMemcpy3DPeerAsync, (const CUDA_MEMCPY3D_PEER *pCopy, CUstream hStream)) \
  X(cuMemcpy3DPeerAsync_ptsz, (const CUDA_MEMCPY3D_PEER *pCopy, CUstream hStream)) \
  X(cuMemPrefetchAsync, (CUdeviceptr devPtr, size_t count, CUdevice dstDevice, CUstream hStream)) \
  X(cuMemPrefetchAsync_ptsz, (CUdeviceptr devPtr, size_t count, CUdevice dstDevice, CUstream hStream)) \
  X(cuMemPrefetchAsync_v2, (CUdeviceptr devPtr, size_t count, CUmemLocation location, unsigned int flags, CUstream hStream)) \
  X(cuMemPrefetchAsync_v2_ptsz, (CUdeviceptr devPtr, size_t count, CUmemLocation location, unsigned int flags, CUstream hStream)) \
  X(cuMemsetD16_v2, (CUdeviceptr dstDevice, unsigned short us, size_t N)) \
  X(cuMemsetD16_v2_ptds, (CUdeviceptr dstDevice, unsigned short us, size_t N)) \
  X(cuMemsetD16Async, (CUdeviceptr dstDevice, unsigned short us, size_t N, CUstream hStream)) \
  X(cuMemsetD16Async_ptsz, (CUdeviceptr dstDevice, unsigned short us, size_t N, CUstream hStream)) \
  X(cuMemsetD2D8_v2, (CUdeviceptr dstDevice, size_t dstPitch, unsigned char uc, size_t Width, size_t Height)) \
  X(cuMemsetD2D8_v2_ptds, (CUdeviceptr dstDevice, size_t dstPitch, unsigned char uc, size_t Width, size_t Height)) \
  X(cuMemsetD2D8Async, (CUdeviceptr dstDevice, size_t dstPitch, unsigned char uc, size_t Width, size_t Height, CUstream hStream)) \
  X(cuMemsetD2D8Async_ptsz, (CUdeviceptr dstDevice, size_t dstPitch, unsigned char uc, size_t Width, size_t Height, CUstream hStream)) \
  X(cuMemsetD2D16_v2, (CUdeviceptr dstDevice, size_t dstPitch, unsigned short us, size_t Width, size_t Height)) \
  X(cuMemsetD2D16_v2_ptds, (CUdeviceptr dstDevice, size_t dstPitch, unsigned short us, size_t Width, size_t Height)) \
  X(cuMemsetD2D16Async, (CUdeviceptr dstDevice, size_t dstPitch, unsigned short us, size_t Width, size_t Height, CUstream hStream)) \
  X(cuMemsetD2D16Async_ptsz, (CUdeviceptr dstDevice, size_t dstPitch, unsigned short us, size_t Width, size_t Height, CUstream hStream)) \
  X(cuMemsetD2D32_v2, (CUdeviceptr dstDevice, size_t dstPitch, unsigned int ui, size_t Width, size_t Height)) \
  X(cuMemsetD2D32_v2_ptds, (CUdeviceptr dstDevice, size_t dstPitch, unsigned int ui, size_t Width, size_t Height)) \
  X(cuMemsetD2D32Async, (CUdeviceptr dstDevice, size_t dstPitch, unsigned int ui, size_t Width, size_t Height, CUstream hStream)) \
  X(cuMemsetD2D32Async_ptsz, (CUdeviceptr dstDevice, size_t dstPitch, unsigned int ui, size_t Width, size_t Height, CUstream hStream)) \
  X(cuMemcpyBatchAsync, (CUdeviceptr *dsts, CUdeviceptr *srcs, size_t *sizes, size_t count, CUmemcpyAttributes *attrs, size_t *attrsIdxs, size_t numAttrs, size_t *failIdx, CUstream hStream)) \
  X(cuMemcpyBatchAsync_ptsz, (CUdeviceptr *dsts, CUdeviceptr *srcs, size_t *sizes, size_t count, CUmemcpyAttributes *attrs, size_t *attrsIdxs, size_t numAttrs, size_t *failIdx, CUstream hStream)) \
  X(cuMemcpyBatchAsync_v2, (CUdeviceptr *dsts, CUdeviceptr *srcs, size_t *sizes, size_t count, CUmemcpyAttributes *attrs, size_t *attrsIdxs, size_t numAttrs, CUstream hStream)) \
  X(cuMemcpyBatchAsync_v2_ptsz, (CUdeviceptr *dsts, CUdeviceptr *srcs, size_t *sizes, size_t count, CUmemcpyAttributes *attrs, size_t *attrsIdxs, size_t numAttrs, CUstream hStream)) \
  X(cuMemcpy3DBatchAsync, (size_t numOps, CUDA_MEMCPY3D_BATCH_OP *opList, size_t *failIdx, unsigned long long flags, CUstream hStream)) \
  X(cuMemcpy3DBatchAsync_ptsz, (size_t numOps, CUDA_MEMCPY3D_BATCH_OP *opList, size_t *failIdx, unsigned long long flags, CUstream hStream)) \
  X(cuMemcpy3DBatchAsync_v2, (size_t numOps, CUDA_MEMCPY3D_BATCH_OP *opList, unsigned long long flags, CUstream hStream)) \
  X(cuMemcpy3DBatchAsync_v2_ptsz, (size_t numOps, CUDA_MEMCPY3D_BATCH_OP *opList, unsigned long long flags, CUstream hStream)) \
  X(cuMemcpyDtoA_v2, (CUarray dstArray, size_t dstOffset, CUdeviceptr srcDevice, size_t ByteCount)) \
  X(cuMemcpyAtoD_v2, (CUdeviceptr dstDevice, CUarray srcArray, size_t srcOffset, size_t ByteCount)) \
  X(cuMemcpyHtoA_v2, (CUarray dstArray, size_t dstOffset, const void *srcHost, size_t ByteCount)) \
  X(cuMemcpyAtoH_v2, (void *dstHost, CUarray srcArray, size_t srcOffset, size_t ByteCount)) \
  X(cuMemcpyAtoA_v2, (CUarray dstArray, size_t dstOffset, CUarray srcArray, size_t srcOffset, size_t ByteCount)) \
  X(cuMemcpyDtoA_v2_ptds, (CUarray dstArray, size_t dstOffset, CUdeviceptr srcDevice, size_t ByteCount)) \
  X(cuMemcpyAtoD_v2_ptds, (CUdeviceptr dstDevice, CUarray srcArray, size_t srcOffset, size_t ByteCount)) \
  X(cuMemcpyHtoA_v2_ptds, (CUarray dstArray, size_t dstOffset, const void *srcHost, size_t ByteCount)) \
  X(cuMemcpyAtoH_v2_ptds, (void *dstHost, CUarray srcArray, size_t srcOffset, size_t ByteCount)) \
  X(cuMemcpyAtoA_v2_ptds, (CUarray dstArray, size_t dstOffset, CUarray srcArray, size_t srcOffset, size_t ByteCount)) \
  X(cuMemcpyHtoAAsync_v2, (CUarray dstArray, size_t dstOffset, const void *srcHost, size_t ByteCount, CUstream hStream)) \
  X(cuMemcpyAtoHAsync_v2, (void *dstHost, CUarray srcArray, size_t srcOffset, size_t ByteCount, CUstream hStream)) \
  X(cuMemcpyHtoAAsync_v2_ptsz, (CUarray dstArray, size_t dstOffset, const void *srcHost, size_t ByteCount, CUstream hStream)) \
  X(cuMemcpyAtoHAsync_v2_ptsz, (void *dstHost, CUarray srcArray, size_t srcOffset, size_t ByteCount, CUstream hStream)) \
  X(cuModuleLoadData, (CUmodule *module, const void *image)) \
  X(cuModuleGetFunction, (CUfunction *hfunc, CUmodule hmod, const char *name)) \
  X(cuLaunchKernel, (CUfunction f, unsigned int gridDimX, unsigned int gridDimY, unsigned int gridDimZ, unsigned int blockDimX, unsigned int blockDimY, unsigned int blockDimZ, unsigned int sharedMemBytes, CUstream hStream, void **kernelParams, void **extra)) \
  X(cuLaunchKernel_ptsz, (CUfunction f, unsigned int gridDimX, unsigned int gridDimY, unsigned int gridDimZ, unsigned int blockDimX, unsigned int blockDimY, unsigned int blockDimZ, unsigned int sharedMemBytes, CUstream hStream, void **kernelParams, void **extra)) \
  X(cuLaunchKernelEx, (const CUlaunchConfig *config, CUfunction f, void **kernelParams, void **extra)) \
  X(cuLaunchKernelEx_ptsz, (const CUlaunchConfig *config, CUfunction f, void **kernelParams, void **extra)) \
  X(cuLaunchCooperativeKernel, (CUfunction f, unsigned int gridDimX, unsigned int gridDimY, unsigned int gridDimZ, unsigned int blockDimX, unsigned int blockDimY, unsigned int blockDimZ, unsigned int sharedMemBytes, CUstream hStream, void **kernelParams)) \
  X(cuLaunchCooperativeKernel_ptsz, (CUfunction f, unsigned int gridDimX, unsigned int gridDimY, unsigned int gridDimZ, unsigned int blockDimX, unsigned int blockDimY, unsigned int blockDimZ, unsigned int sharedMemBytes, CUstream hStream, void **kernelParams)) \
  X(cuStreamCreate, (CUstream *phStream, unsigned int Flags)) \
  X(cuStreamDestroy_v2, (CUstream hStream)) \
  X(cuStreamSynchronize, (CUstream hStream)) \
  X(cuStreamSynchronize_ptsz, (CUstream hStream)) \
  X(cuGetErrorName, (CUresult error, const char **pStr)) \
  X(cuGetErrorString, (CUresult error, const char **pStr)) \
  X(cuGetProcAddress, (const char *symbol, void **pfn, int cudaVersion, cuuint64_t flags)) \
  X(cuGetProcAddress_v2, (const char *symbol, void **pfn, int cudaVersion, cuuint64_t flags, CUdriverProcAddressQueryResult *symbolStatus)) \
  X(cuCheckpointProcessGetRestoreThreadId, (int pid, int *tid)) \
  X(cuCheckpointProcessGetState, (int pid, CUprocessState *state)) \
  X(cuCheckpointProcessLock, (int pid, CUcheckpointLockArgs *args)) \
  X(cuCheckpointProcessCheckpoint, (int pid, CUcheckpointCheckpointArgs *args)) \
  X(cuCheckpointProcessRestore, (int pid, CUcheckpointRestoreArgs *args)) \
  X(cuCheckpointProcessUnlock, (int pid, CUcheckpointUnlockArgs *args)) \
  X(cuDevicePrimaryCtxReset, (CUdevice dev)) \
  X(cuDevicePrimaryCtxReset_v2, (CUdevice dev)) \
  X(cuStreamBeginCapture, (CUstream hStream)) \
  X(cuStreamBeginCapture_ptsz, (CUstream hStream)) \
  X(cuStreamBeginCapture_v2, (CUstream hStream, CUstreamCaptureMode mode)) \
  X(cuStreamBeginCapture_v2_ptsz, (CUstream hStream, CUstreamCaptureMode mode)) \
  X(cuStreamEndCapture, (CUstream hStream, CUgraph *phGraph)) \
  X(cuStreamEndCapture_ptsz, (CUstream hStream, CUgraph *phGraph)) \
  X(cuStreamIsCapturing, (CUstream hStream, CUstreamCaptureStatus *captureStatus)) \
  X(cuStreamIsCapturing_ptsz, (CUstream hStream, CUstreamCaptureStatus *captureStatus)) \
  X(cuStreamGetCaptureInfo, (CUstream hStream, CUstreamCaptureStatus *captureStatus_out, cuuint64_t *id_out)) \
  X(cuStreamGetCaptureInfo_ptsz, (CUstream hStream, CUstreamCaptureStatus *captureStatus_out, cuuint64_t *id_out)) \
  X(cuStreamGetCaptureInfo_v2, (CUstream hStream, CUstreamCaptureStatus *captureStatus_out, cuuint64_t *id_out, CUgraph *graph_out, const CUgraphNode **dependencies_out, size_t *numDependencies_out)) \
  X(cuStreamGetCaptureInfo_v2_ptsz, (CUstream hStream, CUstreamCaptureStatus *captureStatus_out, cuuint64_t *id_out, CUgraph *graph_out, const CUgraphNode **dependencies_out, size_t *numDependencies_out)) \
  X(cuStreamGetCaptureInfo_v3, (CUstream hStream, CUstreamCaptureStatus *captureStatus_out, cuuint64_t *id_out, CUgraph *graph_out, const CUgraphNode **dependencies_out, const CUgraphEdgeData **edgeData_out, size_t *numDependencies_out)) \
  X(cuStreamGetCaptureInfo_v3_ptsz, (CUstream hStream, CUstreamCaptureStatus *captureStatus_out, cuuint64_t *id_out, CUgraph *graph_out, const CUgraphNode **dependencies_out, const CUgraphEdgeData **edgeData_out, size_t *numDependencies_out)) \
  X(cuGraphCreate, (CUgraph *phGraph, unsigned int flags)) \
  X(cuGraphDestroy, (CUgraph hGraph)) \
  X(cuGraphInstantiate, (CUgraphExec *phGraphExec, CUgraph hGraph, CUgraphNode *phErrorNode, char *logBuffer, size_t bufferSize)) \
  X(cuGraphInstantiate_v2, (CUgraphExec *phGraphExec, CUgraph hGraph, CUgraphNode *phErrorNode, char *logBuffer, size_t bufferSize)) \
  X(cuGraphInstantiateWithFlags, (CUgraphExec *phGraphExec, CUgraph hGraph, unsigned long long flags)) \
  X(cuGraphLaunch, (CUgraphExec hGraphExec, CUstream hStream)) \
  X(cuGraphLaunch_ptsz, (CUgraphExec hGraphExec, CUstream hStream)) \
  X(cuGraphExecDestroy, (CUgraphExec hGraphExec)) \
  X(cuGraphAddMemAllocNode, (CUgraphNode *phGraphNode, CUgraph hGraph, const CUgraphNode *dependencies, size_t numDependencies, CUDA_MEM_ALLOC_NODE_PARAMS *nodeParams)) \
  X(cuGraphAddMemFreeNode, (CUgraphNode *phGraphNode, CUgraph hGraph, const CUgraphNode *dependencies, size_t numDependencies, CUdeviceptr dptr)) \
  X(cuDeviceGraphMemTrim, (CUdevice device)) \
  X(cuArrayCreate_v2, (CUarray *pHandle, const CUDA_ARRAY_DESCRIPTOR *pAllocateArray)) \
  X(cuArray3DCreate_v2, (CUarray *pHandle, const CUDA_ARRAY3D_DESCRIPTOR *pAllocateArray)) \
  X(cuArrayDestroy, (CUarray hArray)) \
  X(cuMipmappedArrayCreate, (CUmipmappedArray *pHandle, const CUDA_ARRAY3D_DESCRIPTOR *pMipmappedArrayDesc, unsigned int numMipmapLevels)) \
  X(cuMipmappedArrayDestroy, (CUmipmappedArray hMipmappedArray))

#define GPUSHARE_CUDA_TYPEDEF(name, params) typedef CUresult (*name##_fn) params;
GPUSHARE_CUDA_FUNCS(GPUSHARE_CUDA_TYPEDEF)
#undef GPUSHARE_CUDA_TYPEDEF

/* How cuGetProcAddress resolves names, as the real driver does: callers (the
 * CUDA runtime) ask for the BASE name ("cuMemAlloc") and a CUDA version; the
 * driver answers with the newest variant whose version is <= the requested
 * one, and with the _ptsz variant when PER_THREAD_DEFAULT_STREAM is set.
 * X(base name, exported symbol, first CUDA version, per-thread-stream variant?)
 * A base name whose rows all need a newer version → VERSION_NOT_SUFFICIENT. */
#define GPUSHARE_CUDA_PROCS(X) \
  X(cuInit, cuInit, 2000, 0) \
  X(cuDriverGetVersion, cuDriverGetVersion, 2020, 0) \
  X(cuDeviceGetCount, cuDeviceGetCount, 2000, 0) \
  X(cuDeviceGet, cuDeviceGet, 2000, 0) \
  X(cuDeviceGetName, cuDeviceGetName, 2000, 0) \
  X(cuDeviceGetUuid, cuDeviceGetUuid, 9020, 0) \
  X(cuDeviceGetUuid, cuDeviceGetUuid_v2, 11040, 0) \
  X(cuDeviceTotalMem, cuDeviceTotalMem_v2, 3020, 0) \
  X(cuDeviceGetAttribute, cuDeviceGetAttribute, 2000, 0) \
  X(cuDevicePrimaryCtxRetain, cuDevicePrimaryCtxRetain, 7000, 0) \
  X(cuDevicePrimaryCtxRelease, cuDevicePrimaryCtxRelease, 7000, 0) \
  X(cuDevicePrimaryCtxRelease, cuDevicePrimaryCtxRelease_v2, 11000, 0) \
  X(cuCtxCreate, cuCtxCreate_v2, 3020, 0) \
  X(cuCtxDestroy, cuCtxDestroy_v2, 4000, 0) \
  X(cuCtxSetCurrent, cuCtxSetCurrent, 4000, 0) \
  X(cuCtxGetCurrent, cuCtxGetCurrent, 4000, 0) \
  X(cuCtxSynchronize, cuCtxSynchronize, 2000, 0) \
  X(cuMemGetInfo, cuMemGetInfo_v2, 3020, 0) \
  X(cuMemAlloc, cuMemAlloc_v2, 3020, 0) \
  X(cuMemAllocPitch, cuMemAllocPitch_v2, 3020, 0) \
  X(cuMemAllocManaged, cuMemAllocManaged, 6000, 0) \
  X(cuMemFree, cuMemFree_v2, 3020, 0) \
  X(cuMemAllocAsync, cuMemAllocAsync, 11020, 0) \
  X(cuMemAllocAsync, cuMemAllocAsync_ptsz, 11020, 1) \
  X(cuMemFreeAsync, cuMemFreeAsync, 11020, 0) \
  X(cuMemFreeAsync, cuMemFreeAsync_ptsz, 11020, 1) \
  X(cuMemPoolCreate, cuMemPoolCreate, 11020, 0) \
  X(cuMemPoolDestroy, cuMemPoolDestroy, 11020, 0) \
  X(cuMemAllocFromPoolAsync, cuMemAllocFromPoolAsync, 11020, 0) \
  X(cuMemAllocFromPoolAsync, cuMemAllocFromPoolAsync_ptsz, 11020, 1) \
  X(cuDeviceGetDefaultMemPool, cuDeviceGetDefaultMemPool, 11020, 0) \
  X(cuMemCreate, cuMemCreate, 10020, 0) \
  X(cuMemRelease, cuMemRelease, 10020, 0) \
  X(cuMemAddressReserve, cuMemAddressReserve, 10020, 0) \
  X(cuMemAddressFree, cuMemAddressFree, 10020, 0) \
  X(cuMemMap, cuMemMap, 10020, 0) \
  X(cuMemUnmap, cuMemUnmap, 10020, 0) \
  X(cuMemSetAccess, cuMemSetAccess, 10020, 0) \
  X(cuMemcpyHtoD, cuMemcpyHtoD_v2, 3020, 0) \
  X(cuMemcpyDtoH, cuMemcpyDtoH_v2, 3020, 0) \
  X(cuMemcpyDtoD, cuMemcpyDtoD_v2, 3020, 0) \
  X(cuMemsetD8, cuMemsetD8_v2, 3020, 0) \
  X(cuMemsetD32, cuMemsetD32_v2, 3020, 0) \
  X(cuMemcpyHtoD, cuMemcpyHtoD_v2_ptds, 7000, 1) \
  X(cuMemcpyDtoH, cuMemcpyDtoH_v2_ptds, 7000, 1) \
  X(cuMemcpyDtoD, cuMemcpyDtoD_v2_ptds, 7000, 1) \
  X(cuMemsetD8, cuMemsetD8_v2_ptds, 7000, 1) \
  X(cuMemsetD32, cuMemsetD32_v2_ptds, 7000, 1) \
  X(cuMemcpy, cuMemcpy, 4000, 0) \
  X(cuMemcpy, cuMemcpy_ptds, 7000, 1) \
  X(cuMemcpyAsync, cuMemcpyAsync, 4000, 0) \
  X(cuMemcpyAsync, cuMemcpyAsync_ptsz, 7000, 1) \
  X(cuMemcpyHtoDAsync, cuMemcpyHtoDAsync_v2, 3020, 0) \
  X(cuMemcpyHtoDAsync, cuMemcpyHtoDAsync_v2_ptsz, 7000, 1) \
  X(cuMemcpyDtoHAsync, cuMemcpyDtoHAsync_v2, 3020, 0) \
  X(cuMemcpyDtoHAsync, cuMemcpyDtoHAsync_v2_ptsz, 7000, 1) \
  X(cuMemcpyDtoDAsync, cuMemcpyDtoDAsync_v2, 3020, 0) \
  X(cuMemcpyDtoDAsync, cuMemcpyDtoDAsync_v2_ptsz, 7000, 1) \
  X(cuMemsetD8Async, cuMemsetD8Async, 3020, 0) \
  X(cuMemsetD8Async, cuMemsetD8Async_ptsz, 7000, 1) \
  X(cuMemsetD32Async, cuMemsetD32Async, 3020, 0) \
  X(cuMemsetD32Async, cuMemsetD32Async_ptsz, 7000, 1) \
  X(cuMemcpy2D, cuMemcpy2D_v2, 3020, 0) \
  X(cuMemcpy2D, cuMemcpy2D_v2_ptds, 7000, 1) \
  X(cuMemcpy2DUnaligned, cuMemcpy2DUnaligned_v2, 3020, 0) \
  X(cuMemcpy2DUnaligned, cuMemcpy2DUnaligned_v2_ptds, 7000, 1) \
  X(cuMemcpy2DAsync, cuMemcpy2DAsync_v2, 3020, 0) \
  X(cuMemcpy2DAsync, cuMemcpy2DAsync_v2_ptsz, 7000, 1) \
  X(cuMemcpy3D, cuMemcpy3D_v2, 3020, 0) \
  X(cuMemcpy3D, cuMemcpy3D_v2_ptds, 7000, 1) \
  X(cuMemcpy3DAsync, cuMemcpy3DAsync_v2, 3020, 0) \
  X(cuMemcpy3DAsync, cuMemcpy3DAsync_v2_ptsz, 7000, 1) \
  X(cuMemcpyPeer, cuMemcpyPeer, 4000, 0) \
  X(cuMemcpyPeer, cuMemcpyPeer_ptds, 7000, 1) \
  X(cuMemcpyPeerAsync, cuMemcpyPeerAsync, 4000, 0) \
  X(cuMemcpyPeerAsync, cuMemcpyPeerAsync_ptsz, 7000, 1) \
  X(cuMemcpy3DPeer, cuMemcpy3DPeer, 4000, 0) \
  X(cuMemcpy3DPeer, cuMemcpy3DPeer_ptds, 7000, 1) \
  X(cuMemcpy3DPeerAsync, cuMemcpy3DPeerAsync, 4000, 0) \
  X(cuMemcpy3DPeerAsync, cuMemcpy3DPeerAsync_ptsz, 7000, 1) \
  X(cuMemPrefetchAsync, cuMemPrefetchAsync, 8000, 0) \
  X(cuMemPrefetchAsync, cuMemPrefetchAsync_ptsz, 8000, 1) \
  X(cuMemPrefetchAsync, cuMemPrefetchAsync_v2, 12020, 0) \
  X(cuMemPrefetchAsync, cuMemPrefetchAsync_v2_ptsz, 12020, 1) \
  X(cuMemsetD16, cuMemsetD16_v2, 3020, 0) \
  X(cuMemsetD16, cuMemsetD16_v2_ptds, 7000, 1) \
  X(cuMemsetD16Async, cuMemsetD16Async, 3020, 0) \
  X(cuMemsetD16Async, cuMemsetD16Async_ptsz, 7000, 1) \
  X(cuMemsetD2D8, cuMemsetD2D8_v2, 3020, 0) \
  X(cuMemsetD2D8, cuMemsetD2D8_v2_ptds, 7000, 1) \
  X(cuMemsetD2D8Async, cuMemsetD2D8Async, 3020, 0) \
  X(cuMemsetD2D8Async, cuMemsetD2D8Async_ptsz, 7000, 1) \
  X(cuMemsetD2D16, cuMemsetD2D16_v2, 3020, 0) \
  X(cuMemsetD2D16, cuMemsetD2D16_v2_ptds, 7000, 1) \
  X(cuMemsetD2D16Async, cuMemsetD2D16Async, 3020, 0) \
  X(cuMemsetD2D16Async, cuMemsetD2D16Async_ptsz, 7000, 1) \
  X(cuMemsetD2D32, cuMemsetD2D32_v2, 3020, 0) \
  X(cuMemsetD2D32, cuMemsetD2D32_v2_ptds, 7000, 1) \
  X(cuMemsetD2D32Async, cuMemsetD2D32Async, 3020, 0) \
  X(cuMemsetD2D32Async, cuMemsetD2D32Async_ptsz, 7000, 1) \
  X(cuMemcpyBatchAsync, cuMemcpyBatchAsync, 12080, 0) \
  X(cuMemcpyBatchAsync, cuMemcpyBatchAsync_ptsz, 12080, 1) \
  X(cuMemcpyBatchAsync, cuMemcpyBatchAsync_v2, 13000, 0) \
  X(cuMemcpyBatchAsync, cuMemcpyBatchAsync_v2_ptsz, 13000, 1) \
  X(cuMemcpy3DBatchAsync, cuMemcpy3DBatchAsync, 12080, 0) \
  X(cuMemcpy3DBatchAsync, cuMemcpy3DBatchAsync_ptsz, 12080, 1) \
  X(cuMemcpy3DBatchAsync, cuMemcpy3DBatchAsync_v2, 13000, 0) \
  X(cuMemcpy3DBatchAsync, cuMemcpy3DBatchAsync_v2_ptsz, 13000, 1) \
  X(cuMemcpyDtoA, cuMemcpyDtoA_v2, 3020, 0) \
  X(cuMemcpyDtoA, cuMemcpyDtoA_v2_ptds, 7000, 1) \
  X(cuMemcpyAtoD, cuMemcpyAtoD_v2, 3020, 0) \
  X(cuMemcpyAtoD, cuMemcpyAtoD_v2_ptds, 7000, 1) \
  X(cuMemcpyHtoA, cuMemcpyHtoA_v2, 3020, 0) \
  X(cuMemcpyHtoA, cuMemcpyHtoA_v2_ptds, 7000, 1) \
  X(cuMemcpyAtoH, cuMemcpyAtoH_v2, 3020, 0) \
  X(cuMemcpyAtoH, cuMemcpyAtoH_v2_ptds, 7000, 1) \
  X(cuMemcpyAtoA, cuMemcpyAtoA_v2, 3020, 0) \
  X(cuMemcpyAtoA, cuMemcpyAtoA_v2_ptds, 7000, 1) \
  X(cuMemcpyHtoAAsync, cuMemcpyHtoAAsync_v2, 3020, 0) \
  X(cuMemcpyHtoAAsync, cuMemcpyHtoAAsync_v2_ptsz, 7000, 1) \
  X(cuMemcpyAtoHAsync, cuMemcpyAtoHAsync_v2, 3020, 0) \
  X(cuMemcpyAtoHAsync, cuMemcpyAtoHAsync_v2_ptsz, 7000, 1) \
  X(cuModuleLoadData, cuModuleLoadData, 2000, 0) \
  X(cuModuleGetFunction, cuModuleGetFunction, 2000, 0) \
  X(cuLaunchKernel, cuLaunchKernel, 4000, 0) \
  X(cuLaunchKernel, cuLaunchKernel_ptsz, 7000, 1) \
  X(cuLaunchKernelEx, cuLaunchKernelEx, 11060, 0) \
  X(cuLaunchKernelEx, cuLaunchKernelEx_ptsz, 11060, 1) \
  X(cuLaunchCooperativeKernel, cuLaunchCooperativeKernel, 9000, 0) \
  X(cuLaunchCooperativeKernel, cuLaunchCooperativeKernel_ptsz, 9000, 1) \
  X(cuStreamCreate, cuStreamCreate, 2000, 0) \
  X(cuStreamDestroy, cuStreamDestroy_v2, 4000, 0) \
  X(cuStreamSynchronize, cuStreamSynchronize, 2000, 0) \
  X(cuStreamSynchronize, cuStreamSynchronize_ptsz, 7000, 1) \
  X(cuGetErrorName, cuGetErrorName, 6000, 0) \
  X(cuGetErrorString, cuGetErrorString, 6000, 0) \
  X(cuGetProcAddress, cuGetProcAddress, 11030, 0) \
  X(cuGetProcAddress, cuGetProcAddress_v2, 12000, 0) \
  X(cuCheckpointProcessGetRestoreThreadId, cuCheckpointProcessGetRestoreThreadId, 12080, 0) \
  X(cuCheckpointProcessGetState, cuCheckpointProcessGetState, 12080, 0) \
  X(cuCheckpointProcessLock, cuCheckpointProcessLock, 12080, 0) \
  X(cuCheckpointProcessCheckpoint, cuCheckpointProcessCheckpoint, 12080, 0) \
  X(cuCheckpointProcessRestore, cuCheckpointProcessRestore, 12080, 0) \
  X(cuCheckpointProcessUnlock, cuCheckpointProcessUnlock, 12080, 0) \
  X(cuDevicePrimaryCtxReset, cuDevicePrimaryCtxReset, 7000, 0) \
  X(cuDevicePrimaryCtxReset, cuDevicePrimaryCtxReset_v2, 11000, 0) \
  X(cuStreamBeginCapture, cuStreamBeginCapture, 10000, 0) \
  X(cuStreamBeginCapture, cuStreamBeginCapture_ptsz, 10000, 1) \
  X(cuStreamBeginCapture, cuStreamBeginCapture_v2, 10010, 0) \
  X(cuStreamBeginCapture, cuStreamBeginCapture_v2_ptsz, 10010, 1) \
  X(cuStreamEndCapture, cuStreamEndCapture, 10000, 0) \
  X(cuStreamEndCapture, cuStreamEndCapture_ptsz, 10000, 1) \
  X(cuStreamIsCapturing, cuStreamIsCapturing, 10000, 0) \
  X(cuStreamIsCapturing, cuStreamIsCapturing_ptsz, 10000, 1) \
  X(cuStreamGetCaptureInfo, cuStreamGetCaptureInfo, 10010, 0) \
  X(cuStreamGetCaptureInfo, cuStreamGetCaptureInfo_ptsz, 10010, 1) \
  X(cuStreamGetCaptureInfo, cuStreamGetCaptureInfo_v2, 11030, 0) \
  X(cuStreamGetCaptureInfo, cuStreamGetCaptureInfo_v2_ptsz, 11030, 1) \
  X(cuStreamGetCaptureInfo, cuStreamGetCaptureInfo_v3, 12030, 0) \
  X(cuStreamGetCaptureInfo, cuStreamGetCaptureInfo_v3_ptsz, 12030, 1) \
  X(cuGraphCreate, cuGraphCreate, 10000, 0) \
  X(cuGraphDestroy, cuGraphDestroy, 10000, 0) \
  X(cuGraphInstantiate, cuGraphInstantiate, 10000, 0) \
  X(cuGraphInstantiate, cuGraphInstantiate_v2, 11000, 0) \
  X(cuGraphInstantiate, cuGraphInstantiateWithFlags, 12000, 0) \
  X(cuGraphInstantiateWithFlags, cuGraphInstantiateWithFlags, 11040, 0) \
  X(cuGraphLaunch, cuGraphLaunch, 10000, 0) \
  X(cuGraphLaunch, cuGraphLaunch_ptsz, 10000, 1) \
  X(cuGraphExecDestroy, cuGraphExecDestroy, 10000, 0) \
  X(cuGraphAddMemAllocNode, cuGraphAddMemAllocNode, 11040, 0) \
  X(cuGraphAddMemFreeNode, cuGraphAddMemFreeNode, 11040, 0) \
  X(cuDeviceGraphMemTrim, cuDeviceGraphMemTrim, 11040, 0) \
  X(cuArrayCreate, cuArrayCreate_v2, 3020, 0) \
  X(cuArray3DCreate, cuArray3DCreate_v2, 3020, 0) \
  X(cuArrayDestroy, cuArrayDestroy, 2000, 0) \
  X(cuMipmappedArrayCreate, cuMipmappedArrayCreate, 5000, 0) \
  X(cuMipmappedArrayDestroy, cuMipmappedArrayDestroy, 5000, 0)

#ifdef __cplusplus
}
#endif

#endif
