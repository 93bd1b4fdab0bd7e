/* LD_PRELOAD helper for diagnosing host-side crashes on the GPU machine: on SIGSEGV/SIGABRT prints the
 * native backtrace as "library(+offset)" lines (feed the offsets to addr2line -f -C -e library). */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <execinfo.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static void on_signal(int sig, siginfo_t* info, void* ctx) {
  (void)ctx;
  void* frames[64];
  int n = backtrace(frames, 64);
  fprintf(stderr, "SEGV_TRACE signal %d at address %p\n", sig, info->si_addr);
  for (int i = 0; i < n; ++i) {
    Dl_info d;
    if (dladdr(frames[i], &d) && d.dli_fname)
      fprintf(stderr, "SEGV_TRACE #%d %s +0x%lx %s\n", i, d.dli_fname,
              (unsigned long)((char*)frames[i] - (char*)d.dli_fbase), d.dli_sname ? d.dli_sname : "?");
    else
      fprintf(stderr, "SEGV_TRACE #%d %p\n", i, frames[i]);
  }
  _exit(139);
}

__attribute__((constructor)) static void install(void) {
  struct sigaction sa = {0};
  sa.sa_sigaction = on_signal;
  sa.sa_flags = SA_SIGINFO;
  sigaction(SIGSEGV, &sa, NULL);
  sigaction(SIGBUS, &sa, NULL);
}
