/* fakejob --check-memory / --fill: a pattern in device memory. The check does
 * not fill a notebook's 30 GiB: that would put 30 GiB in host memory per job
 * (the simulated driver keeps contents in a memfd) and make each park copy it.
 * 64 KiB every 256 MiB plus the last 64 KiB span the whole allocation, so a
 * restore that loses, shifts or swaps any region (the start, the middle, the
 * tail, another job's bytes: the seed is the pid) is still caught. */
#include "fakejob_memory.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define FILL_CHUNK (1ull << 20)

/* The pattern's bytes at [off, off + n): a function of the seed and the offset alone (one hash per 8 bytes). */
static void pattern(unsigned seed, unsigned long long off, unsigned char *out, size_t n) {
  for (size_t i = 0; i < n;) {
    unsigned long long at = off + i;
    unsigned long long x = at / 8 * 0x9e3779b97f4a7c15ull ^ ((unsigned long long)seed << 32 | seed);
    x ^= x >> 29, x *= 0xbf58476d1ce4e5b9ull, x ^= x >> 32;
    for (unsigned b = (unsigned)(at % 8); b < 8 && i < n; b++, i++) out[i] = (unsigned char)(x >> (8 * b));
  }
}

/* The i-th sample's offset and length; 0 past the last. */
static size_t sample(const fakejob_pattern_t *p, unsigned long long i, unsigned long long *off) {
  unsigned long long strided = (p->bytes + FAKEJOB_STRIDE - 1) / FAKEJOB_STRIDE;
  if (i < strided) *off = i * FAKEJOB_STRIDE;
  else if (i == strided && p->bytes > FAKEJOB_SAMPLE && (p->bytes - FAKEJOB_SAMPLE) % FAKEJOB_STRIDE >= FAKEJOB_SAMPLE)
    *off = p->bytes - FAKEJOB_SAMPLE; /* the tail, unless a stride's sample already covers it */
  else return 0;
  return p->bytes - *off < FAKEJOB_SAMPLE ? (size_t)(p->bytes - *off) : (size_t)FAKEJOB_SAMPLE;
}

CUresult fakejob_pattern_write(const fakejob_pattern_t *p, unsigned long long *bytes) {
  unsigned char buf[FAKEJOB_SAMPLE];
  *bytes = 0;
  unsigned long long off;
  for (unsigned long long i = 0; ; i++) {
    size_t n = sample(p, i, &off);
    if (!n) break;
    pattern(p->seed, off, buf, n);
    CUresult rc = p->htod(p->base + off, buf, n);
    if (rc != CUDA_SUCCESS) return rc;
    *bytes += n;
  }
  return CUDA_SUCCESS;
}

/* One sample read back into got, with the copy the job was told to use. */
static CUresult read_sample(const fakejob_pattern_t *p, unsigned long long off, unsigned char *got, size_t n) {
  if (p->copy2d) { /* 16 rows (1 when n is no multiple of 16) into a host image 8 bytes wider per row */
    static unsigned char wide[FAKEJOB_SAMPLE + 16 * 8];
    size_t rows = n % 16 ? 1 : 16, w = n / rows;
    CUDA_MEMCPY2D c = {.srcMemoryType = CU_MEMORYTYPE_DEVICE, .srcDevice = p->base + off, .srcPitch = w,
                       .dstMemoryType = CU_MEMORYTYPE_HOST, .dstHost = wide, .dstPitch = w + 8, .WidthInBytes = w, .Height = rows};
    CUresult rc = p->copy2d(&c);
    for (size_t r = 0; rc == CUDA_SUCCESS && r < rows; r++) memcpy(got + r * w, wide + r * (w + 8), w);
    return rc;
  }
  if (p->peer) {
    CUresult rc = p->peer(p->base + FAKEJOB_PEER_SCRATCH, p->ctx, p->base + off, p->ctx, n);
    return rc == CUDA_SUCCESS ? p->dtoh(got, p->base + FAKEJOB_PEER_SCRATCH, n) : rc;
  }
  if (p->batch) { /* two halves, one batch, as a framework moves several tensors at once */
    CUdeviceptr dsts[2] = {(CUdeviceptr)(uintptr_t)got, (CUdeviceptr)(uintptr_t)(got + n / 2)}, srcs[2] = {p->base + off, p->base + off + n / 2};
    size_t sizes[2] = {n / 2, n - n / 2}, idx[1] = {0}, fail;
    CUmemcpyAttributes at = {.srcAccessOrder = CU_MEMCPY_SRC_ACCESS_ORDER_STREAM};
    CUresult rc = p->batch(dsts, srcs, sizes, n / 2 ? 2 : 1, &at, idx, 1, &fail, p->stream);
    return rc == CUDA_SUCCESS ? p->sync(p->sync_stream) : rc;
  }
  if (!p->dtoh_async) return p->dtoh(got, p->base + off, n);
  CUresult rc = p->dtoh_async(got, p->base + off, n, p->stream);
  return rc == CUDA_SUCCESS ? p->sync(p->sync_stream) : rc;
}

/* The memset2d check: a rectangle set to a new value, then the whole scratch place read back. */
static CUresult memset_rect_check(const fakejob_pattern_t *p, int *ok) {
  static unsigned checks;
  unsigned char v = (unsigned char)((p->seed + checks++) % 255 + 1), got[FAKEJOB_SAMPLE];
  CUdeviceptr at = p->base + FAKEJOB_PEER_SCRATCH;
  CUresult rc = p->memset2d(at, FAKEJOB_RECT_PITCH, v, FAKEJOB_RECT_WIDTH, FAKEJOB_RECT_ROWS);
  if (rc == CUDA_SUCCESS) rc = p->dtoh(got, at, sizeof got);
  for (size_t i = 0; rc == CUDA_SUCCESS && i < sizeof got; i++) {
    int in_rect = i / FAKEJOB_RECT_PITCH < FAKEJOB_RECT_ROWS && i % FAKEJOB_RECT_PITCH < FAKEJOB_RECT_WIDTH;
    if (got[i] != (in_rect ? v : 0)) *ok = 0;
  }
  return rc;
}

CUresult fakejob_pattern_check(const fakejob_pattern_t *p, unsigned long long *bytes, int *ok) {
  unsigned char want[FAKEJOB_SAMPLE], got[FAKEJOB_SAMPLE];
  *bytes = 0;
  *ok = 1;
  if (p->memset2d) {
    CUresult rc = memset_rect_check(p, ok);
    if (rc != CUDA_SUCCESS) return rc;
  }
  unsigned long long off;
  for (unsigned long long i = 0; ; i++) {
    size_t n = sample(p, i, &off);
    if (!n) break;
    pattern(p->seed, off, want, n);
    CUresult rc = read_sample(p, off, got, n);
    if (rc != CUDA_SUCCESS) return rc;
    if (memcmp(want, got, n) != 0) *ok = 0;
    *bytes += n;
  }
  return CUDA_SUCCESS;
}

CUresult fakejob_pattern_fill(const fakejob_pattern_t *p, unsigned long long bytes) {
  unsigned char *buf = malloc(FILL_CHUNK);
  if (!buf) return CUDA_ERROR_OUT_OF_MEMORY;
  CUresult rc = CUDA_SUCCESS;
  for (unsigned long long off = 0; rc == CUDA_SUCCESS && off < bytes; off += FILL_CHUNK) {
    size_t n = bytes - off < FILL_CHUNK ? (size_t)(bytes - off) : (size_t)FILL_CHUNK;
    pattern(p->seed, off, buf, n);
    rc = p->htod(p->base + off, buf, n);
  }
  free(buf);
  return rc;
}
