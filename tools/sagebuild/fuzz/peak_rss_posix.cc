// sb_peak_rss RESULT CMD [ARGS...]: runs CMD and writes "<peak RSS in KiB>
// <exit status>" to RESULT.  The hostile-wheel tests measure verify through
// it because a child's peak RSS (getrusage) includes what its parent held
// when it forked: this program is small, so the number is verify's own.
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>

int main(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: sb_peak_rss RESULT CMD [ARGS...]\n");
    return 2;
  }
  pid_t pid = ::fork();
  if (pid == 0) {
    ::execv(argv[2], argv + 2);
    ::_exit(127);
  }
  int status = 0;
  struct rusage ru {};
  if (pid < 0 || ::wait4(pid, &status, 0, &ru) != pid) return 2;
  int code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  if (FILE* f = std::fopen(argv[1], "w")) {
    std::fprintf(f, "%ld %d\n", ru.ru_maxrss, code);
    std::fclose(f);
  }
  return code;
}
