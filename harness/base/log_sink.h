/* SPDX-License-Identifier: MIT */
/* Where log lines go besides the log fd (docs/cli.md#logs --log-file) and the
 * hook through which a terminal reporter draws them above its progress
 * line. Library-internal. */
#ifndef SCENETEST_HARNESS_LOG_SINK_H
#define SCENETEST_HARNESS_LOG_SINK_H

#include <stddef.h>

/* With fd >= 0, every line the level lets through goes to fd, and the log
 * fd (stderr) gets only warnings and errors; -1 turns it off. Inherited
 * by forked children, which write their own lines to it (whole lines,
 * buffered per process: the fd should be O_APPEND). Setting it writes out
 * the lines buffered for the previous one. The caller owns fd.
 * Thread-safety: any thread; set it before the run starts. */
void st__log_set_file(int fd);
/* Writes out what this process has buffered for the --log-file (lines
 * go there in whole-line batches; see log.c for when). A no-op without a
 * file. Thread-safety: any thread. */
void st__log_flush(void);

/* The first error (an errno) writing the --log-file since it was set,
 * by this process or a child forked after (they share it), after writing
 * out this process's buffer; 0 when every write succeeded.
 * Thread-safety: any thread. */
int st__log_file_error(void);

/* Called for every line the level lets through, in the process that set
 * it (a forked child never calls its parent's hook): line[0..len) is the
 * whole "[LEVEL] message\n". When to_terminal is 1 the hook writes the
 * line to the log fd itself (after making room on the screen); when 0 the
 * line went to the --log-file only and the hook may just look at it. NULL
 * removes it. Thread-safety: any thread; calls are serialised. */
typedef void (*st__log_hook)(void *data /* IN/OUT: the hook's */, int level,
                             const char *line /* IN */, size_t len,
                             int to_terminal);
void st__log_set_hook(st__log_hook fn, void *data /* IN, borrowed */);

/* A complete log line of another process (an isolated child's,
 * docs/cli.md#text: passed through "as they are") written where this process's
 * own lines would go to the terminal: through the hook, else to the log fd.
 * Thread-safety: any thread. */
void st__log_passthrough(const char *line /* IN */, size_t len);

/* Writes a complete line to the log fd (stderr): what a hook calls for a
 * line with to_terminal set. Thread-safety: any thread. */
void st__log_emit(const char *line /* IN */, size_t len);
/* The log fd (default 2). Thread-safety: any thread. */
int st__log_fd(void);

/* A supervised or isolated child's log lines go to a sink, which sends
 * them to its parent over the wire (docs/reliability.md#the-process-model:
 * never by a prefix convention on fd 2, so that a kernel printing "[TIMING]
 * ..." cannot forge a record line); the parent hands each line to
 * st__log_passthrough. fn gets one whole line ("[LEVEL] message\n", len bytes)
 * from any thread that logs, after the --log-file (if any) got it. NULL: back
 * to the log fd. Thread-safety: only while no other thread logs (a child,
 * before its first case). */
typedef void (*st__log_sink_fn)(void *data, const char *line, size_t len);
void st__log_set_sink(st__log_sink_fn fn, void *data /* IN: borrowed */);

/* Writes "[TIMING] MESSAGE" as it is: the harness's own phase and record
 * lines (docs/measuring.md), whose fields it formats from checked names.
 * Everything else goes through st_log, which escapes the token.
 * Thread-safety: any thread. */
void st__log_timing(const char *fmt /* IN */, ...)
    __attribute__((format(printf, 1, 2)));

/* The terminal rule (docs/cli.md): lines below level are kept off the
 * log fd (stderr) and counted, instead of written; the --log-file and a
 * hook's look (to_terminal 0) still get them. 0 turns it off (the
 * default). Thread-safety: any thread; set it before the run starts. */
void st__log_set_terminal_floor(int level);
/* How many lines the floor has kept off the terminal since it was set
 * (this process's own and those passed through). Thread-safety: any. */
unsigned long st__log_held_count(void);

/* write(2) all of buf to fd, retrying on EINTR and short writes; 0 or -1. */
int st__log_write_fd(int fd, const char *buf /* IN */, size_t len);

#endif
