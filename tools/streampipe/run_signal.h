/* SIGINT, SIGTERM and SIGHUP during `streampipe run`: without a journal, the hidden
 * full-size temporary output (run_files.h) is removed before the process dies of the signal,
 * so that an interrupted run leaves nothing behind; with one (run_signal_arm_stop), the run
 * stops feeding and keeps what is durable for --resume. The handler only unlinks a path copied beforehand into a static
 * buffer and re-raises the signal with its default action (async-signal-safe), so the
 * process still ends as killed by that signal (a shell's status 130 for SIGINT, 143 for
 * SIGTERM). SIGKILL cannot be caught: run_files_create_output removes such leftovers. */
#ifndef SP_CLI_RUN_SIGNAL_H
#define SP_CLI_RUN_SIGNAL_H

/* Installs the handler for each of the signals not ignored when the process started (a
 * command started with nohup, or in the background of a script, keeps ignoring them).
 * Until run_signal_arm, a signal is only noted and acted on there or in run_signal_finish. */
void run_signal_install(void);
/* The temporary output now exists at `path`: a signal removes it and kills the process. */
void run_signal_arm(const char *path);
/* A journaled run (--resume's journal, run_files.h): from now on a first signal only asks
 * the run to stop (run_signal_stop_requested; the sources stop feeding and the journal is
 * made durable as the files close), and a second one ends the process at once, which is safe
 * too: the journal never claims more than is durable, and the output is not in place. */
void run_signal_arm_stop(void);
/* The signal that asked a journaled run to stop, or 0. Any thread. */
int run_signal_stop_requested(void);
/* Before the temporary output is renamed into place or removed: signals are only noted. */
void run_signal_disarm(void);
/* Restores the dispositions run_signal_install found; a signal noted meanwhile is re-raised
 * now, so the run still ends as interrupted. */
void run_signal_finish(void);

#endif
