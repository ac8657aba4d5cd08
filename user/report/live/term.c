// SPDX-License-Identifier: GPL-2.0
/* The live view's terminal: curses setup, stderr capture, restore on every exit path. */
#include <curses.h>
#include <errno.h>
#include <fcntl.h>
#include <langinfo.h>
#include <locale.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "lib/utf8.h"
#include "report/live/term.h"

#define ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))

/* ---- stderr capture ---- */

void term__set_msg(struct term *t, const char *s)
{
	if (!strncmp(s, "memphase: ", 10))
		s += 10;
	utf8__esc_term(t->msg, sizeof(t->msg), s);
	t->msg_changed = true;
}

static void capture_add(struct term *t, const char *s, size_t n)
{
	size_t i;

	if (!t->cap)
		t->cap = malloc(TERM_CAPTURE_MAX);
	if (!t->cap || t->cap_len + n > TERM_CAPTURE_MAX) {
		t->cap_lost += n;
	} else {
		memcpy(t->cap + t->cap_len, s, n);
		t->cap_len += n;
	}
	/* the last complete line becomes the message line */
	for (i = 0; i < n; i++) {
		if (s[i] == '\n') {
			t->line[t->line_len] = '\0';
			if (t->line_len)
				term__set_msg(t, t->line);
			t->line_len = 0;
		} else if (t->line_len < sizeof(t->line) - 1) {
			t->line[t->line_len++] = s[i] == '\t' ? ' ' : s[i];
		}
	}
}

bool term__drain(struct term *t)
{
	char buf[4096];
	ssize_t n;
	bool changed;

	if (t->cap_fd >= 0)
		while ((n = read(t->cap_fd, buf, sizeof(buf))) > 0)
			capture_add(t, buf, n);
	changed = t->msg_changed;
	t->msg_changed = false;
	return changed;
}

static int capture_start(struct term *t)
{
	int p[2];

	fflush(stderr);
	t->saved_err = fcntl(STDERR_FILENO, F_DUPFD_CLOEXEC, 3);
	if (t->saved_err < 0)
		return -errno;
	if (pipe2(p, O_CLOEXEC | O_NONBLOCK)) {
		close(t->saved_err);
		t->saved_err = -1;
		return -errno;
	}
	/* a full pipe drops messages (EAGAIN) instead of blocking memphase */
	dup2(p[1], STDERR_FILENO);
	close(p[1]);
	t->cap_fd = p[0];
	return 0;
}

static void capture_stop(struct term *t)
{
	if (t->saved_err < 0)
		return;
	fflush(stderr);
	term__drain(t);
	dup2(t->saved_err, STDERR_FILENO);
	close(t->saved_err);
	t->saved_err = -1;
	close(t->cap_fd);
	t->cap_fd = -1;
	if (t->cap_len && write(STDERR_FILENO, t->cap, t->cap_len) < 0)
		t->cap_lost += t->cap_len;
	if (t->line_len)
		fprintf(stderr, "%.*s\n", (int)t->line_len, t->line);
	if (t->cap_lost)
		fprintf(stderr, "memphase: %zu bytes of messages were lost\n", t->cap_lost);
}

/* ---- terminal restoration on every exit path ---- */

static struct term *term_active;
static const int crash_sigs[] = { SIGSEGV, SIGBUS, SIGABRT, SIGFPE, SIGILL };
static struct sigaction crash_old[ARRAY_SIZE(crash_sigs)];

void term__restore(struct term *t)
{
	unsigned int i;

	if (t->restored)
		return;
	t->restored = true;
	if (t->on) {
		endwin();
		delscreen(t->scr);
		t->scr = NULL;
		for (i = 0; i < ARRAY_SIZE(crash_sigs); i++)
			sigaction(crash_sigs[i], &crash_old[i], NULL);
	}
	capture_stop(t);
	if (t->old_ctype) {
		setlocale(LC_CTYPE, t->old_ctype);
		free(t->old_ctype);
		t->old_ctype = NULL;
	}
	if (term_active == t)
		term_active = NULL;
}

static void at_exit(void)
{
	if (term_active)
		term__restore(term_active);
}

/* Best effort: leave a usable terminal behind, then crash as before. */
static void on_crash(int sig)
{
	struct term *t = term_active;

	if (t && !t->restored) {
		t->restored = true;
		endwin();
		if (t->saved_err >= 0)
			dup2(t->saved_err, STDERR_FILENO);
	}
	signal(sig, SIG_DFL);
	raise(sig);
}

/* ---- setup ---- */

void term__init(struct term *t)
{
	memset(t, 0, sizeof(*t));
	t->saved_err = t->cap_fd = -1;
}

int term__start(struct term *t)
{
	struct sigaction sa = { .sa_handler = on_crash, .sa_flags = SA_RESETHAND };
	static bool registered;
	const char *cur, *term = getenv("TERM");
	unsigned int i;

	/* a terminal that cannot address the cursor gets status lines */
	if (!term || !*term || !strcmp(term, "dumb"))
		return -ENOTTY;
	/* wide characters for the strip; numbers stay in the C locale */
	cur = setlocale(LC_CTYPE, NULL);
	t->old_ctype = strdup(cur ? cur : "C");
	setlocale(LC_CTYPE, "");
	t->utf8 = !strcmp(nl_langinfo(CODESET), "UTF-8");

	fflush(stdout);
	t->scr = newterm(NULL, stdout, stdin);
	if (!t->scr) {
		setlocale(LC_CTYPE, t->old_ctype);
		return -ENOTTY;
	}
	set_term(t->scr);
	cbreak();		/* Ctrl-C still signals */
	noecho();
	nonl();
	keypad(stdscr, TRUE);
	nodelay(stdscr, TRUE);
	set_escdelay(25);
	curs_set(0);
	if (has_colors()) {
		start_color();
		use_default_colors();
		t->colors = true;
	}
	t->on = true;
	term_active = t;
	if (!registered) {
		atexit(at_exit);
		registered = true;
	}
	sigemptyset(&sa.sa_mask);
	for (i = 0; i < ARRAY_SIZE(crash_sigs); i++)
		sigaction(crash_sigs[i], &sa, &crash_old[i]);
	if (capture_start(t))
		term__set_msg(t, "stderr is not captured: messages may garble the screen");
	return 0;
}

bool term__on(const struct term *t)
{
	return t && t->on && !t->restored;
}

void term__vnotice(struct term *t, const char *fmt, va_list ap)
{
	char raw[TERM_MSG_MAX], buf[TERM_MSG_MAX];

	vsnprintf(raw, sizeof(raw), fmt, ap);
	/* names in notices come from the target (paths, comm): no control byte gets out */
	utf8__esc_term(buf, sizeof(buf), raw);
	if (!term__on(t)) {
		fprintf(stderr, "memphase: %s\n", buf);
		return;
	}
	/* through the capture, so it is replayed at the end too */
	if (t->cap_fd >= 0) {
		fprintf(stderr, "memphase: %s\n", buf);
		term__drain(t);
	}
	term__set_msg(t, buf);
}

void term__free(struct term *t)
{
	term__restore(t);
	free(t->cap);
	t->cap = NULL;
}
