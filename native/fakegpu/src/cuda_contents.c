/* Fake libcuda.so.1: device memory contents. A process's memory on one device
 * (its process slot) lives in a memfd, "fakegpu-device-slotN", at offset
 * va - FG_VA_BASE: sparse, so untouched GiBs cost nothing, and freed ranges are
 * punched out (freed memory loses its contents, as on a GPU). A checkpoint,
 * called by another process, reaches it through /proc/PID/fd and moves every
 * data extent to a second memfd of the target, "fakegpu-host-slotN" (the
 * process's host memory, as the real driver's checkpoint uses), and back on
 * restore. Both die with the process: a reaped slot leaves nothing behind.
 * Copies, memsets and discards run as device operations: they wait while the
 * process is locked, and a lock waits for the one in flight (ckpt_kernel_*).
 * Every copy (synchronous, _ptds, asynchronous, _ptsz, cuMemcpy*; the 2D/3D,
 * peer and batched copies of cuda_copy2d.c and cuda_batch.c, and the memsets of
 * cuda_memset.c too) runs in its stream's order and is complete when its call
 * returns.
 * Only memory of the cuMemAlloc family has contents here; pointers into VMM
 * mappings or graph memory are not found (INVALID_VALUE). */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "cuda_internal.h"

#define CHUNK (1u << 20) /* bytes per read/write of a copy */

typedef struct {
  int dev_fd, host_fd; /* -1: nothing written yet */
  int slot;            /* the slot these belong to (a device re-registered gets new ones) */
} store_t;

static pthread_mutex_t g_store_mu = PTHREAD_MUTEX_INITIALIZER;
static store_t g_store[MAX_VIS];
static pthread_once_t g_store_once = PTHREAD_ONCE_INIT;

static void store_init(void) {
  for (int i = 0; i < MAX_VIS; i++) g_store[i] = (store_t){-1, -1, -1};
}

static void store_close(store_t *s) {
  if (s->dev_fd >= 0) close(s->dev_fd);
  if (s->host_fd >= 0) close(s->host_fd);
  *s = (store_t){-1, -1, -1};
}

/* d's device memfd, made at the first write (create); -1 when nothing was ever written. */
static int device_fd(devctx_t *d, int create) {
  pthread_once(&g_store_once, store_init);
  pthread_mutex_lock(&g_store_mu);
  store_t *s = &g_store[d->vis];
  if (s->dev_fd >= 0 && s->slot != d->slot) store_close(s);
  if (s->dev_fd < 0 && create && d->slot >= 0) {
    char name[64];
    snprintf(name, sizeof name, "fakegpu-device-slot%d", d->slot);
    int dev = memfd_create(name, MFD_CLOEXEC);
    snprintf(name, sizeof name, "fakegpu-host-slot%d", d->slot);
    int host = dev >= 0 ? memfd_create(name, MFD_CLOEXEC) : -1;
    if (host >= 0) *s = (store_t){dev, host, d->slot};
    else if (dev >= 0) close(dev);
  }
  int fd = s->dev_fd;
  pthread_mutex_unlock(&g_store_mu);
  return fd;
}

void contents_close(devctx_t *d) {
  pthread_once(&g_store_once, store_init);
  pthread_mutex_lock(&g_store_mu);
  store_close(&g_store[d->vis]);
  pthread_mutex_unlock(&g_store_mu);
}

static int punch(int fd, off_t off, size_t n) {
  return fallocate(fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, off, (off_t)n);
}

void contents_discard(devctx_t *d, unsigned long long va, size_t size) {
  if (va < FG_VA_BASE || (va >> 62)) return; /* handles and keys above the VA range hold no bytes */
  ckpt_kernel_begin(d); /* parked bytes are on the host memfd: free them once they are back */
  int fd = device_fd(d, 0);
  if (fd >= 0) punch(fd, (off_t)(va - FG_VA_BASE), size);
  ckpt_kernel_end(d);
}

/* ---------------- the owner's copies ---------------- */

static int write_all(int fd, const void *buf, size_t n, off_t off) {
  for (const char *p = buf; n;) {
    ssize_t w = pwrite(fd, p, n, off);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) return -1;
    p += w, n -= (size_t)w, off += w;
  }
  return 0;
}

/* Holes and bytes past the end read as zeros. */
static int read_all(int fd, void *buf, size_t n, off_t off) {
  char *p = buf;
  while (n && fd >= 0) {
    ssize_t r = pread(fd, p, n, off);
    if (r < 0 && errno == EINTR) continue;
    if (r < 0) return -1;
    if (r == 0) break;
    p += r, n -= (size_t)r, off += r;
  }
  memset(p, 0, n);
  return 0;
}

/* The device and memfd offset of [ptr, ptr + n), all inside one allocation. */
static CUresult locate(CUdeviceptr ptr, size_t n, devctx_t **d, off_t *off) {
  CUresult rc = mem_find(ptr, n, d);
  if (rc != CUDA_SUCCESS) return rc;
  if (dev_lost(*d)) return CUDA_ERROR_DEVICE_UNAVAILABLE;
  *off = (off_t)(ptr - FG_VA_BASE);
  return CUDA_SUCCESS;
}

/* ---- stream order ----
 * The executor runs a stream's kernels on its own thread (cuda_exec.c), so a copy keeps stream
 * order by waiting, before it touches memory, until the work queued ahead of it on its stream has
 * run (on the legacy stream: all of the device's work, which the legacy stream synchronises
 * with), and then completes at once: an asynchronous copy is done when its call returns, which
 * CUDA allows (the driver copies pageable host memory so), and nothing can overtake it. */
typedef copy_order_t order_t;
#define SYNC_LEGACY ((order_t){NULL, 0, 0})
#define SYNC_PTDS ((order_t){NULL, 1, 0})
#define ASYNC(s) ((order_t){(s), 0, 1})
#define ASYNC_PTSZ(s) ((order_t){(s), 1, 1})

static void wait_stream(struct CUstream_st *s) {
  devctx_t *d = s->dc;
  pthread_mutex_lock(&d->mu);
  for (uint64_t target = s->enq; s->done < target;) pthread_cond_wait(&d->cv_done, &d->mu);
  pthread_mutex_unlock(&d->mu);
}

static CUresult in_order(order_t o) {
  CUresult rc;
  struct CUstream_st *s = stream_resolve(o.stream, o.per_thread, &rc);
  if (!s) return rc;
  devctx_t *d = s->dc;
  int legacy = s == &d->null_stream;
  if (cap_open()) {
    CUstreamCaptureStatus st = CU_STREAM_CAPTURE_STATUS_NONE;
    if (!o.async) rc = cap_unsafe_call(); /* synchronous copies: prohibited while this thread's stream captures */
    else if (legacy) rc = cap_ctx_sync(d); /* the legacy stream would wait for a capturing stream */
    else if (cuStreamIsCapturing(s, &st) == CUDA_SUCCESS && st != CU_STREAM_CAPTURE_STATUS_NONE)
      rc = cap_stream_sync(s); /* copy nodes are not simulated: the capture fails as on an unsupported call */
    if (rc != CUDA_SUCCESS) return rc;
  }
  if (legacy) dc_sync(d);
  else wait_stream(s);
  return CUDA_SUCCESS;
}

CUresult contents_in_order(copy_order_t o) { return in_order(o); }

int contents_io(devctx_t *d, void *buf, size_t n, unsigned long long va, int write) {
  off_t off = (off_t)(va - FG_VA_BASE);
  if (!write) return read_all(device_fd(d, 0), buf, n, off);
  int fd = device_fd(d, 1);
  return fd >= 0 ? write_all(fd, buf, n, off) : -1;
}

/* ---- copies ---- */

static CUresult htod(CUdeviceptr dstDevice, const void *srcHost, size_t ByteCount, order_t o) {
  NEED_CTX(cur);
  (void)cur;
  if (!srcHost) return CUDA_ERROR_INVALID_VALUE;
  if (ByteCount == 0) return CUDA_SUCCESS;
  devctx_t *d;
  off_t off;
  CUresult rc = locate(dstDevice, ByteCount, &d, &off);
  if (rc == CUDA_SUCCESS) rc = in_order(o);
  if (rc != CUDA_SUCCESS) return rc;
  ckpt_kernel_begin(d);
  int fd = device_fd(d, 1);
  rc = fd >= 0 && write_all(fd, srcHost, ByteCount, off) == 0 ? CUDA_SUCCESS : CUDA_ERROR_OPERATING_SYSTEM;
  ckpt_kernel_end(d);
  return rc;
}

static CUresult dtoh(void *dstHost, CUdeviceptr srcDevice, size_t ByteCount, order_t o) {
  NEED_CTX(cur);
  (void)cur;
  if (!dstHost) return CUDA_ERROR_INVALID_VALUE;
  if (ByteCount == 0) return CUDA_SUCCESS;
  devctx_t *d;
  off_t off;
  CUresult rc = locate(srcDevice, ByteCount, &d, &off);
  if (rc == CUDA_SUCCESS) rc = in_order(o);
  if (rc != CUDA_SUCCESS) return rc;
  ckpt_kernel_begin(d);
  rc = read_all(device_fd(d, 0), dstHost, ByteCount, off) == 0 ? CUDA_SUCCESS : CUDA_ERROR_OPERATING_SYSTEM;
  ckpt_kernel_end(d);
  return rc;
}

static int all_zero(const unsigned char *b, size_t n) {
  return n == 0 || (b[0] == 0 && memcmp(b, b + 1, n - 1) == 0);
}

/* Zero chunks become holes: copying untouched memory keeps the copy sparse. */
static int copy_chunk(int fd, unsigned char *buf, off_t from, off_t to, size_t n) {
  if (read_all(fd, buf, n, from) != 0) return -1;
  return all_zero(buf, n) ? punch(fd, to, n) : write_all(fd, buf, n, to);
}

static CUresult dtod(CUdeviceptr dstDevice, CUdeviceptr srcDevice, size_t ByteCount, order_t o) {
  NEED_CTX(cur);
  (void)cur;
  if (ByteCount == 0) return CUDA_SUCCESS;
  devctx_t *dd, *sd;
  off_t to, from;
  CUresult rc = locate(dstDevice, ByteCount, &dd, &to);
  if (rc == CUDA_SUCCESS) rc = locate(srcDevice, ByteCount, &sd, &from);
  if (rc != CUDA_SUCCESS) return rc;
  if (dd != sd) return CUDA_ERROR_NOT_SUPPORTED; /* peer copies between devices are not simulated */
  if ((rc = in_order(o)) != CUDA_SUCCESS) return rc;
  unsigned char *buf = malloc(CHUNK);
  if (!buf) return CUDA_ERROR_OUT_OF_MEMORY;
  ckpt_kernel_begin(dd);
  int fd = device_fd(dd, 1), bad = fd < 0;
  int backwards = to > from && to < from + (off_t)ByteCount; /* overlapping: as memmove */
  for (size_t done = 0; !bad && done < ByteCount;) {
    size_t n = ByteCount - done < CHUNK ? ByteCount - done : CHUNK;
    off_t at = backwards ? (off_t)(ByteCount - done - n) : (off_t)done;
    bad = copy_chunk(fd, buf, from + at, to + at, n) != 0;
    done += n;
  }
  ckpt_kernel_end(dd);
  free(buf);
  return bad ? CUDA_ERROR_OPERATING_SYSTEM : CUDA_SUCCESS;
}

/* cuMemcpy under unified addressing: the fake's device addresses are [FG_VA_BASE, mem_va_end()),
 * everything else is host memory (the range is not reserved on the host: a host buffer that
 * happens to lie in it is taken for device memory, and refused unless an allocation holds it). */
int contents_is_device(unsigned long long p) { return p >= FG_VA_BASE && p < mem_va_end(); }

static CUresult copy_unified(CUdeviceptr dst, CUdeviceptr src, size_t ByteCount, order_t o) {
  if (contents_is_device(dst) && contents_is_device(src)) return dtod(dst, src, ByteCount, o);
  if (contents_is_device(dst)) return htod(dst, (const void *)(uintptr_t)src, ByteCount, o);
  if (contents_is_device(src)) return dtoh((void *)(uintptr_t)dst, src, ByteCount, o);
  NEED_CTX(cur);
  (void)cur;
  if (!dst || !src) return CUDA_ERROR_INVALID_VALUE;
  CUresult rc = ByteCount ? in_order(o) : CUDA_SUCCESS;
  if (rc == CUDA_SUCCESS && ByteCount) memmove((void *)(uintptr_t)dst, (const void *)(uintptr_t)src, ByteCount);
  return rc;
}

int contents_fill(devctx_t *d, unsigned long long va, size_t n, const unsigned char *pattern) {
  off_t off = (off_t)(va - FG_VA_BASE);
  int fd = device_fd(d, pattern != NULL);
  if (!pattern) return fd >= 0 && punch(fd, off, n) != 0 ? -1 : 0; /* never written: it reads as zeros already */
  for (size_t done = 0; done < n;) {
    size_t k = n - done < FG_FILL_CHUNK ? n - done : FG_FILL_CHUNK;
    if (fd < 0 || write_all(fd, pattern, k, off + (off_t)done) != 0) return -1;
    done += k;
  }
  return 0;
}

/* The entry points: one per stream convention (legacy, per-thread, asynchronous on a stream, or the per-thread one). */
#define HTOD_ARGS CUdeviceptr dstDevice, const void *srcHost, size_t ByteCount
#define DTOH_ARGS void *dstHost, CUdeviceptr srcDevice, size_t ByteCount
#define DTOD_ARGS CUdeviceptr dstDevice, CUdeviceptr srcDevice, size_t ByteCount
#define UNIFIED_ARGS CUdeviceptr dst, CUdeviceptr src, size_t ByteCount
API cuMemcpyHtoD_v2(HTOD_ARGS) { return htod(dstDevice, srcHost, ByteCount, SYNC_LEGACY); }
API cuMemcpyHtoD_v2_ptds(HTOD_ARGS) { return htod(dstDevice, srcHost, ByteCount, SYNC_PTDS); }
API cuMemcpyHtoDAsync_v2(HTOD_ARGS, CUstream s) { return htod(dstDevice, srcHost, ByteCount, ASYNC(s)); }
API cuMemcpyHtoDAsync_v2_ptsz(HTOD_ARGS, CUstream s) { return htod(dstDevice, srcHost, ByteCount, ASYNC_PTSZ(s)); }
API cuMemcpyDtoH_v2(DTOH_ARGS) { return dtoh(dstHost, srcDevice, ByteCount, SYNC_LEGACY); }
API cuMemcpyDtoH_v2_ptds(DTOH_ARGS) { return dtoh(dstHost, srcDevice, ByteCount, SYNC_PTDS); }
API cuMemcpyDtoHAsync_v2(DTOH_ARGS, CUstream s) { return dtoh(dstHost, srcDevice, ByteCount, ASYNC(s)); }
API cuMemcpyDtoHAsync_v2_ptsz(DTOH_ARGS, CUstream s) { return dtoh(dstHost, srcDevice, ByteCount, ASYNC_PTSZ(s)); }
API cuMemcpyDtoD_v2(DTOD_ARGS) { return dtod(dstDevice, srcDevice, ByteCount, SYNC_LEGACY); }
API cuMemcpyDtoD_v2_ptds(DTOD_ARGS) { return dtod(dstDevice, srcDevice, ByteCount, SYNC_PTDS); }
API cuMemcpyDtoDAsync_v2(DTOD_ARGS, CUstream s) { return dtod(dstDevice, srcDevice, ByteCount, ASYNC(s)); }
API cuMemcpyDtoDAsync_v2_ptsz(DTOD_ARGS, CUstream s) { return dtod(dstDevice, srcDevice, ByteCount, ASYNC_PTSZ(s)); }
API cuMemcpy(UNIFIED_ARGS) { return copy_unified(dst, src, ByteCount, SYNC_LEGACY); }
API cuMemcpy_ptds(UNIFIED_ARGS) { return copy_unified(dst, src, ByteCount, SYNC_PTDS); }
API cuMemcpyAsync(UNIFIED_ARGS, CUstream s) { return copy_unified(dst, src, ByteCount, ASYNC(s)); }
API cuMemcpyAsync_ptsz(UNIFIED_ARGS, CUstream s) { return copy_unified(dst, src, ByteCount, ASYNC_PTSZ(s)); }

/* ---------------- the checkpointer's side (another process) ---------------- */

/* A new descriptor of pid's "device" or "host" memfd of `slot`: -1 none (nothing was ever
 * written there), -2 it exists but cannot be opened (no right to the target's files). */
static int open_target_memfd(int pid, const char *which, int slot) {
  char dir[64], path[128], link[256], want[64];
  snprintf(dir, sizeof dir, "/proc/%d/fd", pid);
  snprintf(want, sizeof want, "/memfd:fakegpu-%s-slot%d ", which, slot); /* the kernel adds "(deleted)" */
  DIR *dp = opendir(dir);
  if (!dp) return errno == ENOENT ? -1 : -2; /* gone (its bytes with it), or not ours to read */
  int fd = -1;
  for (struct dirent *e; fd == -1 && (e = readdir(dp));) {
    if (e->d_name[0] == '.') continue;
    snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
    ssize_t n = readlink(path, link, sizeof link - 1);
    if (n <= 0) continue;
    link[n] = 0;
    if (strncmp(link, want, strlen(want)) == 0) {
      fd = open(path, O_RDWR | O_CLOEXEC);
      if (fd < 0) fd = -2;
    }
  }
  closedir(dp);
  return fd;
}

/* Copies every data extent of `from` into the empty `to` at the same offsets, then empties
 * `from`. On failure `to` is emptied again and `from` is as it was. */
static int move_extents(int from, int to) {
  if (ftruncate(to, 0) != 0) return -1;
  unsigned char *buf = malloc(CHUNK);
  int bad = !buf;
  for (off_t at = 0; !bad;) {
    off_t data = lseek(from, at, SEEK_DATA);
    if (data < 0) {
      bad = errno != ENXIO; /* ENXIO: no data past `at` */
      break;
    }
    off_t hole = lseek(from, data, SEEK_HOLE);
    bad = hole < 0;
    for (off_t o = data; !bad && o < hole;) {
      size_t n = hole - o < CHUNK ? (size_t)(hole - o) : CHUNK;
      bad = read_all(from, buf, n, o) != 0 || write_all(to, buf, n, o) != 0;
      o += (off_t)n;
    }
    at = hole;
  }
  free(buf);
  if (bad) {
    ftruncate(to, 0);
    return -1;
  }
  return ftruncate(from, 0);
}

int contents_move(int pid, int slot, int to_host) {
  int dev = open_target_memfd(pid, "device", slot), host = open_target_memfd(pid, "host", slot);
  int rc = 0;
  if (dev == -2 || host == -2) rc = -1;
  else if (dev >= 0 && host >= 0) rc = to_host ? move_extents(dev, host) : move_extents(host, dev);
  /* neither: the process never wrote device memory there, nothing to move */
  if (dev >= 0) close(dev);
  if (host >= 0) close(host);
  return rc;
}
