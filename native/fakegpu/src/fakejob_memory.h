/* fakejob's memory contents (fakejob_memory.c): a seeded pattern written into
 * the job's allocation and read back, to see that a park/restore kept it. */
#ifndef FAKEJOB_MEMORY_H
#define FAKEJOB_MEMORY_H

#include "../../include/cuda_abi.h"

typedef struct {
  cuMemcpyHtoD_v2_fn htod;
  cuMemcpyDtoH_v2_fn dtoh;
  /* set: the check reads with this asynchronous copy on `stream`, then sync(sync_stream), as a
   * framework's .cpu() does (a parked job's first call of a cell is then the asynchronous copy) */
  cuMemcpyDtoHAsync_v2_fn dtoh_async;
  CUstream stream, sync_stream;
  cuStreamSynchronize_fn sync;
  /* set: the check reads each sample with this 2D copy (rows into a wider host pitch) */
  cuMemcpy2D_v2_fn copy2d;
  /* set: the check first copies each sample with this peer copy (ctx both sides) to FAKEJOB_PEER_SCRATCH, then reads it there */
  cuMemcpyPeer_fn peer;
  /* set: the check first sets a FAKEJOB_RECT_ROWS-row rectangle in FAKEJOB_PEER_SCRATCH with this 2D memset (a value
   * per check) and reads the whole place back: the rows set, the gaps between them never written (zeros) */
  cuMemsetD2D8_v2_fn memset2d;
  /* set: the check reads each sample as a batch of two device-to-host copies on `stream`, then sync(sync_stream) */
  cuMemcpyBatchAsync_fn batch;
  CUcontext ctx;
  CUdeviceptr base;
  unsigned long long bytes; /* the allocation's size */
  unsigned seed;            /* the pattern differs per job (its pid) and per offset */
} fakejob_pattern_t;

/* Samples of the allocation: FAKEJOB_SAMPLE bytes at every FAKEJOB_STRIDE and its last bytes. */
#define FAKEJOB_SAMPLE (64ull * 1024)
#define FAKEJOB_STRIDE (256ull * 1024 * 1024)
/* The peer check's landing place: the 64 KiB after the first sample, never a sample itself (with --mem >= FAKEJOB_PEER_MIN) */
#define FAKEJOB_PEER_SCRATCH FAKEJOB_SAMPLE
#define FAKEJOB_PEER_MIN (3 * FAKEJOB_SAMPLE)
/* The memset2d check's rectangle there: rows of FAKEJOB_RECT_WIDTH bytes, FAKEJOB_RECT_PITCH apart */
#define FAKEJOB_RECT_ROWS 16
#define FAKEJOB_RECT_WIDTH 1024
#define FAKEJOB_RECT_PITCH 4096

/* Writes the samples (*bytes: how many). */
CUresult fakejob_pattern_write(const fakejob_pattern_t *p, unsigned long long *bytes);
/* Reads them back: *ok 1 when every byte is as written. */
CUresult fakejob_pattern_check(const fakejob_pattern_t *p, unsigned long long *bytes, int *ok);
/* Writes the pattern over the first `bytes` of the allocation, densely (a bench's content). */
CUresult fakejob_pattern_fill(const fakejob_pattern_t *p, unsigned long long bytes);

#endif
