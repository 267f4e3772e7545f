/* strays.h -- what a command leaves when its shepherd is killed.
 *
 * A command's processes are its shepherd's tree (shepherd.h) only while the
 * shepherd lives: a command that kills it (`kill -9 $PPID`) has its
 * processes re-parented to the sandbox's init, where no timeout, cancel or
 * output limit of the shepherd reaches them.  So when a shepherd dies
 * without having said how its command ended, the worker ends that tree
 * itself: every child of init that started after the command did, and
 * everything under those, is frozen (SIGSTOP, walked again while new ones
 * turn up) and killed.
 *
 * What a command left running on purpose is not touched: its shepherd was
 * released (its command ended normally) and exited, so those processes
 * are children of init too.  Such a process can only be mistaken for a
 * stray when it started after the killed command did, i.e. while that
 * command ran; so when a released shepherd goes while another command
 * runs, the children of init it left are remembered as kept (at most
 * STRAYS_KEPT of them, by pid and start time) and never taken for strays.
 *
 * Times are the kernel's process start times: clock ticks since boot.
 */
#ifndef TALKBACK_AGENT_STRAYS_H
#define TALKBACK_AGENT_STRAYS_H

#include <stdbool.h>
#include <stdint.h>

/* Now, as a process start time (clock ticks since boot). */
uint64_t strays_now(void);

/* The shepherd of a command that started at since died without saying
 * how the command ended (it was killed): freeze and kill the command's
 * strays.  Returns how many processes were killed. */
int strays_kill(uint64_t since);

/* The shepherd pid of a command that started at since was released (its
 * command ended normally): it exits, and what it leaves goes to init. */
void strays_released(int pid, uint64_t since);
/* A child the worker reaped that is no job's: when it was a released
 * shepherd, what it left is looked at by the next strays_settle. */
void strays_reaped(int pid);
/* After a round of reaping (kills first): others, whether other commands
 * still run; then what the released shepherds reaped since left is kept.
 * Without others nothing needs keeping (nothing can be a stray of a
 * command that started before it). */
void strays_settle(bool others);

#endif
