/* A parked job asks for its memory back. gpushare parks an idle managed job when
 * another job needs its GPU memory (the driver's checkpoint moves it to host
 * memory); the job's next CUDA call then waits inside the driver until the
 * memory is restored. Launches show that wait through the gate (in_launch);
 * synchronisations, allocations and frees show it here: the job's park file
 * (GPUSHARE_PARK_FILE, one page made by the engine, owned by the job's user)
 * counts the threads inside such a call, and the engine restores a parked job
 * as soon as it sees one. No file, or not ours: nothing is counted. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <pthread.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "enrol.h"
#include "gate_internal.h"
#include "park.h"

static gs_park_file_t *park_file;
static pthread_once_t park_once = PTHREAD_ONCE_INIT;

static void park_map(void) {
  const char *path = secure_getenv("GPUSHARE_PARK_FILE");
  int fd;
  if (path && *path) {
    fd = open(path, O_RDWR | O_CLOEXEC | O_NOFOLLOW);
  } else {
    (void)gs_gate_me(); /* the first CUDA call may be a copy: enrol first (enrol.c), the job's park file comes with it */
    fd = gs_enrolment_take_park_fd();
    path = "(enrolled)";
  }
  if (fd < 0) return;
  struct stat st;
  void *m = MAP_FAILED;
  if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size >= (off_t)sizeof(gs_park_file_t))
    m = mmap(NULL, sizeof(gs_park_file_t), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  close(fd);
  if (m == MAP_FAILED) return;
  if (__atomic_load_n(&((gs_park_file_t *)m)->magic, __ATOMIC_ACQUIRE) != GS_PARK_MAGIC) {
    munmap(m, sizeof(gs_park_file_t));
    return;
  }
  park_file = m;
  gs_log("park file %s mapped", path);
}

void gs_park_enter(void) {
  pthread_once(&park_once, park_map);
  if (!park_file) return;
  __atomic_add_fetch(&park_file->in_call, 1, __ATOMIC_SEQ_CST);
  __atomic_add_fetch(&park_file->calls, 1, __ATOMIC_RELAXED);
}

void gs_park_leave(void) {
  if (!park_file) return;
  __atomic_store_n(&park_file->last_call_ns, gs_now_ns(), __ATOMIC_RELAXED);
  __atomic_sub_fetch(&park_file->in_call, 1, __ATOMIC_SEQ_CST);
}
