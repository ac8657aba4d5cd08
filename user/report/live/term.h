/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The live view's terminal plumbing, apart from what it draws:
 * - curses on stdout (wide characters when the locale is UTF-8; numbers stay in the C
 *   locale; colours when the terminal has them);
 * - stderr captured while curses owns the screen: a pipe (a full one drops messages
 *   instead of blocking memphase); the last complete line becomes the message line, and
 *   all of it is written to the real stderr again by term__restore();
 * - the terminal restored on every exit path: term__restore(), at exit(), and on a crash
 *   signal (SIGSEGV, SIGBUS, SIGABRT, SIGFPE, SIGILL: restore, then crash as before);
 * - notices escaped for the terminal: names in them come from the target (paths, comm).
 */
#ifndef __MP_TERM_H
#define __MP_TERM_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>

#define TERM_MSG_MAX		256
#define TERM_CAPTURE_MAX	(64 * 1024)

struct screen;

struct term {
	bool on;			/* curses was set up (see term__on()) */
	bool restored;
	struct screen *scr;
	bool utf8;			/* the strip may use block characters */
	bool colors;
	char *old_ctype;

	/* stderr while curses runs */
	int saved_err;			/* the real stderr, -1 */
	int cap_fd;			/* read end of the capture pipe, -1 */
	char *cap;
	size_t cap_len;
	size_t cap_lost;
	char line[TERM_MSG_MAX];	/* partial line from the pipe */
	size_t line_len;
	char msg[TERM_MSG_MAX];		/* the message line, escaped */
	bool msg_changed;
};

/* Not started yet: no curses, no capture. */
void term__init(struct term *t);
/*
 * Sets up curses on stdout, the crash restore and the stderr capture. 0, or -ENOTTY when
 * the terminal cannot address the cursor (then nothing changed).
 */
int term__start(struct term *t);
/* Does curses own the screen? NULL-safe. */
bool term__on(const struct term *t);
/* Reads what was written to stderr. Returns true when the message line changed. */
bool term__drain(struct term *t);
/* Sets the message line: s escaped, without a leading "memphase: ". */
void term__set_msg(struct term *t, const char *s);
/*
 * A notice, formatted and escaped: while curses runs, through the capture (so it is
 * replayed at the end) onto the message line; else "memphase: <msg>" on stderr at once.
 * t may be NULL.
 */
void term__vnotice(struct term *t, const char *fmt, va_list ap)
	__attribute__((format(printf, 2, 0)));
/* Ends curses and the capture, replays the captured messages. Idempotent. */
void term__restore(struct term *t);
/* term__restore(), and frees the capture buffer. */
void term__free(struct term *t);

#endif
