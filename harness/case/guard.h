/* SPDX-License-Identifier: MIT */
/* The guard-page fault handler (--guard-pages, docs/reliability.md): a
 * SIGSEGV or SIGBUS whose address is in the PROT_NONE page after a tensor
 * (case/tbuf.h) is described in one line naming the tensor, whether it
 * was read or written (x86-64; elsewhere "accessed") and how far past its
 * end, written where the process that forked this one reads it after the
 * death (a supervised child's shared state page, an isolated child's
 * note page), or to fd 2 when nobody will (--no-supervise). Then the
 * signal takes its course as before: the process dies of it, and the
 * supervisor makes the note its case's error. A fault anywhere else goes
 * to the handler that was there before (the default action, or a
 * sanitizer's) untouched. */
#ifndef SCENETEST_HARNESS_GUARD_H
#define SCENETEST_HARNESS_GUARD_H

#include <stddef.h>

/* The most a note takes, its NUL included. */
#define ST__GUARD_NOTE_MAX 256u

/* Installs the handler for SIGSEGV and SIGBUS in this process (on an
 * alternate signal stack for the calling thread, unless it has one),
 * keeping the handlers it replaces; nested calls count. Children forked
 * afterwards inherit it. Thread-safety: the run's thread, while no kernel
 * runs. */
void st__guard_install(void);
/* Undoes the matching st__guard_install (the last one puts the previous
 * handlers back). */
void st__guard_uninstall(void);

/* Where this process's handler writes its note: buf (cap bytes, NUL
 * terminated; normally shared memory its parent reads after the death),
 * or NULL: a line "scenetest: error: NOTE" to fd 2. Call in the child,
 * after fork, before it runs a kernel. */
void st__guard_note_to(char *buf /* IN, borrowed */, size_t cap);

/* A page of shared memory for a note, zeroed (MAP_SHARED | MAP_ANONYMOUS:
 * a child forked afterwards writes it, its parent reads it). NULL when it
 * cannot be mapped (then faults are reported as plain signals). Free with
 * st__guard_note_free. */
char *st__guard_note_new(void);
void st__guard_note_free(char *note /* IN, owned */);

#endif
