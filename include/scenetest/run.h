/* SPDX-License-Identifier: MIT */
/* Running cases: options, the observer interface, events and results. */
#ifndef SCENETEST_RUN_H
#define SCENETEST_RUN_H

#include <scenetest/registry.h>
#include <scenetest/scene.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef enum st_manual_mode {
  ST_MANUAL_EXCLUDE = 0,
  ST_MANUAL_INCLUDE = 1,
  ST_MANUAL_ONLY = 2
} st_manual_mode;

/* A selection filter (st_run_options.case_filter): nonzero keeps case
 * case_index of scene. */
typedef int (*st_case_filter)(void *data, const st_scene *scene,
                              size_t case_index);

/* The CLI's `run` options as a struct. Initialise with
 * st_run_options_init(), which sets size to the sizeof this program was
 * compiled with: the library reads only the fields that size covers (a
 * newer library gives fields an older program does not know their
 * defaults). Strings and arrays are borrowed for the run. */
typedef struct st_run_options {
  size_t size;                  /* sizeof(st_run_options); set by _init */
  const char *platform;         /* default "cpu" */
  const char *const *selectors; /* --case; n_selectors entries */
  size_t n_selectors;
  st_manual_mode manual;   /* default exclude */
  unsigned rounds;         /* 0: the case's `rounds`, else 1 */
  int skip_golden;         /* 1: skip golden for every case */
  uint64_t seed;           /* default 0 */
  unsigned jobs;           /* cases in parallel; default 1 */
  unsigned golden_threads; /* 0: max(1, min(8, cores / jobs)) */
  int fail_fast;
  int strict_record;
  const char *const *watch; /* --watch NAME=GLOB[,GLOB...] */
  size_t n_watch;
  st_registry *registry; /* NULL: a built-in registry per run */
  int redirect_stdout;   /* point fd 1 at fd 2 while phases run */
  int isolate;           /* each case in a forked child */
  double timeout;        /* seconds per case; 0 = none */
  const char *dump_dir;  /* --dump-on-fail: a failing compare's
                            tensors as .npy under DIR; NULL none */
  /* docs/cli.md#sharding. Sharding: a case belongs to shard
   * st_shard_hash(scene, case) % shard_total; shard_total 0 or 1 is
   * unsharded. Applied after the selectors, the platform, the manual
   * mode and only_cases. */
  unsigned shard_index;
  unsigned shard_total;
  unsigned repeat;       /* the selection runs this often; 0 = 1 */
  int shuffle;           /* permute each iteration's order */
  uint64_t shuffle_seed; /* iteration k uses shuffle_seed + k - 1 */
  /* With use_only_cases, only the cases named "SCENE::CASE" in
   * only_cases (n_only_cases entries, borrowed) are selected (--rerun-failed);
   * names that match no case select nothing. */
  const char *const *only_cases;
  size_t n_only_cases;
  int use_only_cases;
  /* 1: the case whose `record` phase emits the process's autoload record
   * keeps the line in its result, whatever the log level (the JSON and
   * JUnit reports show it). 0 saves isolated children formatting a line
   * the log level drops. */
  int keep_record;
  /* --golden-platform: the backend that computes golden for every case,
   * over the case's and the scene's golden_platform; NULL: theirs, else
   * "reference" (docs/scene-format.md#scene-keys). */
  const char *golden_platform;
  /* 1: the cases run in supervised child processes
   * (docs/reliability.md#the-process-model): a child that dies fails only its
   * running case, a fresh one goes on, and SIGINT/SIGTERM end the run with a
   * complete report. The CLI's `run` sets it unless --no-supervise; the library
   * default is 0. */
  int supervise;
  /* 1: someone watches the run as it goes (a terminal's progress line):
   * supervised children then tell each case's begin and log lines as they
   * happen, not in batches (a wake-up of the supervisor for each). */
  int live;
  /* 1: SIGINT and SIGTERM end an in-process run (neither supervised nor
   * isolated) with every report finished too: the running case an error,
   * the rest skips, st_run_result_interrupted set (a second signal ends
   * the process: a hanging kernel cannot be stopped in-process). The
   * forking runs (supervise, isolate) always handle them. The CLI's `run`
   * sets it; the library default is 0. */
  int interrupts;
  /* 1 (--guard-pages): every tensor buffer's end sits against a PROT_NONE
   * page, so a kernel reading or writing past a tensor's end faults at
   * once; a supervised or isolated run makes the fault the case's error,
   * naming the tensor (docs/reliability.md). Level 2 only: level 3's
   * tensors live in shared segments, guarded by canary zones. Process-wide
   * while the run lasts. */
  int guard_pages;
  /* 1: only_cases (with use_only_cases) already holds exactly this
   * shard's cases, chosen by the caller (the CLI's --shard-by
   * durations:FILE, docs/cli.md#sharding): the hash filter is skipped and
   * shard_index/shard_total only label the reports. Default 0. */
  int shard_preselected;
  /* 1 (--strict-mistrust): a mistrusted case that passes fails
   * (docs/cli.md#mistrust). */
  int strict_mistrust;
  /* N >= 2 (--determinism N): each case runs at least N rounds in this
   * process on the same inputs, and every round's outputs must equal the
   * first's bit for bit (docs/cli.md#determinism); 0 or 1: off. */
  unsigned determinism;
  /* --maxfail N (docs/cli.md): the run stops starting cases once N have
   * failed, errored or passed unexpectedly; those not run are skipped
   * with the reason "not run: --maxfail". 0: no limit (fail_fast alone
   * is a limit of 1). */
  unsigned maxfail;
  /* A further filter (--tag, -k, --skip): after the selectors, the
   * manual mode, the platform and only_cases, before sharding, a case is
   * kept only when case_filter(case_filter_data, scene, case index)
   * returns nonzero. NULL: none. Called from the selecting thread. */
  st_case_filter case_filter;
  void *case_filter_data;
  /* --failed-first: the selected cases named "SCENE::CASE" here (borrowed)
   * come first, in selection order, then the rest. */
  const char *const *first_cases;
  size_t n_first_cases;
} st_run_options;

/* Sets size and the defaults. Thread-safety: any thread. */
ST_EXTERN void st_run_options_init(st_run_options *opts /* OUT */);

typedef enum st_phase_status {
  ST_PHASE_OK = 0,
  ST_PHASE_FAIL = 1,
  ST_PHASE_ERROR = 2,
  ST_PHASE_SKIP = 3
} st_phase_status;

/* "ok", "fail", "error", "skip". */
ST_EXTERN const char *st_phase_status_name(st_phase_status s);

/* One event of a case: a phase call, or a `load` event naming a shared
 * object that became loaded during the phase before it. All pointers are
 * owned by the result that holds the event. */
typedef struct st_event {
  const char *name;  /* "args", "golden", ..., or "load" */
  int round;         /* 0-based round; -1 outside rounds */
  uint64_t start_ns; /* CLOCK_MONOTONIC */
  uint64_t dur_ns;
  st_phase_status status;
  const char *const *loaded; /* objects that became loaded during it */
  size_t n_loaded;
  const char *object; /* load events: the object's path */
  const char *phase;  /* load events: the phase that loaded it */
  int emitted;        /* record events: 1 if this one emitted */
  /* run events: the kernel's own device time and its host<->device copy
   * time as its platform reported them (st_op_call); ST_NS_NONE when not
   * reported, and in every other event. */
  uint64_t device_ns;
  uint64_t copy_ns;
} st_event;

typedef enum st_case_status {
  ST_CASE_PASS = 0,
  ST_CASE_FAIL = 1,
  ST_CASE_ERROR = 2,
  ST_CASE_SKIP = 3,
  /* expect: fail (docs/scene-format.md#expected-failures): a failure that was
   * expected (a pass for the exit status), and a pass that was not (a failure).
   */
  ST_CASE_XFAIL = 4,
  ST_CASE_XPASS = 5
} st_case_status;

/* "pass", "fail", "error", "skip", "xfail", "xpass". */
ST_EXTERN const char *st_case_status_name(st_case_status s);

typedef struct st_case_result st_case_result;
typedef struct st_run_result st_run_result;

/* Identifies a case while it runs. Owned by the runner; valid during the
 * callback. */
typedef struct st_case_info {
  const char *scene;
  const char *name;
  const char *file;
  int line;
  const char *platform;
  uint64_t seed;
  size_t index;       /* 0-based position in the run (iterations included) */
  size_t total;       /* cases the run reports: selected cases times repeat */
  unsigned iteration; /* 1-based --repeat iteration; 1 without it */
} st_case_info;

typedef struct st_run_info {
  const char *platform;
  uint64_t seed;
  size_t total;         /* cases the run reports (times repeat) */
  unsigned repeat;      /* iterations, >= 1 */
  unsigned shard_index; /* as in st_run_options; shard_total 0: none */
  unsigned shard_total;
  int shuffle; /* 1: shuffle_seed says the order */
  uint64_t shuffle_seed;
} st_run_info;

/* Callbacks of a run. Any may be NULL. Called from the scheduling thread,
 * one at a time. case_begin, the phase callbacks and case_end come in
 * selection order (under -j and --isolate a case's are replayed when it is
 * its turn); case_finish comes in the order cases finished.
 *
 * Initialise each with st_observer_init() (size = the sizeof this program
 * was compiled with). st_run steps through an array of observers by each
 * one's size field, not by the library's sizeof(st_observer), so an array
 * built against older or newer headers is walked correctly; callbacks the
 * size does not cover are treated as NULL. */
typedef struct st_observer {
  size_t size; /* sizeof(st_observer); set by st_observer_init() */
  void *data;
  void (*run_begin)(void *data, const st_run_info *info);
  void (*case_begin)(void *data, const st_case_info *info);
  void (*phase_begin)(void *data, const st_case_info *info, const char *phase,
                      int round);
  void (*phase_end)(void *data, const st_case_info *info,
                    const st_event *event);
  void (*case_end)(void *data, const st_case_info *info,
                   const st_case_result *result);
  void (*run_end)(void *data, const st_run_result *result);
  /* Once per case, in the order cases finished: under -j or --isolate a
   * case may finish (and this be called) before an earlier case's
   * case_end; at -j 1 it comes right before case_end. Cases --fail-fast
   * left unrun "finish" when they are reported. The --events writer uses
   * it (docs/cli.md#--events-file: "in the order the cases finished"). */
  void (*case_finish)(void *data, const st_case_info *info,
                      const st_case_result *result);
} st_observer;

/* Zeroes *obs (every callback NULL) and sets size. Thread-safety: any
 * thread. */
ST_EXTERN void st_observer_init(st_observer *obs /* OUT */);

/* A selected case: a scene of the set and a case index in it. */
typedef struct st_case_ref {
  const st_scene *scene;
  size_t index;
} st_case_ref;

/* Selects cases as `run` does (selectors, manual mode, platform). A
 * selector matching no case, or only manual cases, is ST_EUSAGE with a
 * message saying so; opts with a size below its first layout is ST_EINVAL.
 * *out is malloc'd (caller frees); *count may be 0.
 * Thread-safety: any thread. */
ST_EXTERN st_status st_select_cases(const st_scene_set *set /* IN */,
                                    const st_run_options *opts /* IN */,
                                    st_case_ref **out /* OUT */,
                                    size_t *count /* OUT */,
                                    st_error *err /* OUT */) ST_WUR;

/* The shard hash of docs/cli.md#sharding: 64-bit FNV-1a (offset basis
 * 0xcbf29ce484222325, prime 0x100000001b3) over the bytes of
 * "SCENE::CASE". A case belongs to shard hash % total.
 * Thread-safety: any thread. */
ST_EXTERN uint64_t st_shard_hash(const char *scene /* IN */,
                                 const char *kase /* IN */);

/* Runs the selected cases. Returns ST_OK when the cases ran (whatever
 * their verdicts; see st_run_result_exit_code), ST_EUSAGE for a selection
 * or option error (an unknown platform, a bad watch spec, a selector that
 * selects nothing: nothing ran), ST_EINVAL when opts or an observer has a
 * size below its first layout (not initialised with its _init function).
 * observers may be NULL when n_observers is 0; they are borrowed for the
 * run and stepped by their size fields. *out is the caller's
 * (st_run_result_free). With opts->supervise, SIGINT and SIGTERM are handled
 * while the run lasts (st_run_result_interrupted); out of memory, every
 * observer still hears of every case, then ST_ENOMEM. Thread-safety: one run
 * per process at a time (it may redirect fd 1). */
ST_EXTERN st_status st_run(const st_scene_set *set /* IN */,
                           const st_run_options *opts /* IN */,
                           const st_observer *observers /* IN */,
                           size_t n_observers, st_run_result **out /* OUT */,
                           st_error *err /* OUT */) ST_WUR;

/* Runs one case (no selection) in the calling process and returns its
 * result (*out is the caller's, st_case_result_free); for tests and
 * embedders. No observers are called; of opts it uses platform, rounds,
 * skip_golden, seed, golden_threads, strict_record, watch and registry
 * (selectors, manual, jobs, fail_fast, redirect_stdout, isolate,
 * timeout, supervise and live belong to st_run and are ignored). An unknown
 * platform or a bad watch spec is ST_EUSAGE, a case_index out of range
 * ST_EINVAL; a case that fails or errors is still ST_OK, its verdict in the
 * result. Thread-safety: any thread for a level-2 scene (concurrent calls share
 * the thread pool, the loader watch and the record state, which are
 * thread-safe). A level-3 scene forks worker processes: call it only while
 * no other case runs in the process (docs/reliability.md#the-process-model). */
ST_EXTERN st_status st_run_case(const st_scene *scene /* IN */,
                                size_t case_index,
                                const st_run_options *opts /* IN */,
                                st_case_result **out /* OUT */,
                                st_error *err /* OUT */) ST_WUR;

/* Result accessors read a result that no longer changes: any thread.
 * Strings and events are owned by the result. Accepts NULL. */
ST_EXTERN void st_run_result_free(st_run_result *res /* IN, owned */);
ST_EXTERN size_t st_run_result_count(const st_run_result *res /* IN */);
/* In the order of selection. Owned by res. */
ST_EXTERN const st_case_result *
st_run_result_get(const st_run_result *res /* IN */, size_t index);
/* Counts by status. */
ST_EXTERN size_t st_run_result_count_status(const st_run_result *res /* IN */,
                                            st_case_status status);
/* 0 all passed, were skipped or failed as expected (xfail); 1 a case
 * failed, errored or passed unexpectedly (xpass), a case has no result,
 * or the run was interrupted. */
ST_EXTERN int st_run_result_exit_code(const st_run_result *res /* IN */);
/* The signal (SIGINT, SIGTERM) that stopped a supervised run, or 0: the
 * case that was running is an error ("interrupted"), the unrun ones are
 * skips ("not run: interrupted"). */
ST_EXTERN int st_run_result_interrupted(const st_run_result *res /* IN */);

/* Accepts NULL. Do not free a result owned by an st_run_result. */
ST_EXTERN void st_case_result_free(st_case_result *res /* IN, owned */);
ST_EXTERN const char *st_case_result_scene(const st_case_result *res /* IN */);
ST_EXTERN const char *st_case_result_case(const st_case_result *res /* IN */);
ST_EXTERN const char *st_case_result_file(const st_case_result *res /* IN */);
ST_EXTERN int st_case_result_line(const st_case_result *res /* IN */);
ST_EXTERN const char *
st_case_result_platform(const st_case_result *res /* IN */);
ST_EXTERN uint64_t st_case_result_seed(const st_case_result *res /* IN */);
ST_EXTERN st_case_status
st_case_result_status(const st_case_result *res /* IN */);
/* NULL when there is no message. */
ST_EXTERN const char *
st_case_result_message(const st_case_result *res /* IN */);
/* What a child process printed (isolation, workers); NULL if none. */
ST_EXTERN const char *st_case_result_output(const st_case_result *res /* IN */);
ST_EXTERN uint64_t
st_case_result_duration_ns(const st_case_result *res /* IN */);
/* The 1-based --repeat iteration that produced the result (1 without
 * repeat, and for st_run_case). */
ST_EXTERN unsigned st_case_result_iteration(const st_case_result *res /* IN */);
ST_EXTERN long st_case_result_pid(const st_case_result *res /* IN */);
ST_EXTERN int st_case_result_record_stale(const st_case_result *res /* IN */);
ST_EXTERN size_t st_case_result_event_count(const st_case_result *res /* IN */);
ST_EXTERN const st_event *
st_case_result_event(const st_case_result *res /* IN */, size_t index);

#ifdef __cplusplus
}
#endif
#endif
