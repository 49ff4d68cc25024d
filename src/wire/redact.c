/* redact: see redact.h. */
#include "redact.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sbuf.h"
#include "xalloc.h"

#define REDACT_MAX 256

/* where a form is looked for */
#define IN_TEXT 1   /* rendered text, in either syntax */
#define IN_TERM 2   /* the external format of the term */
#define AT_END 4    /* a cut may leave its first bytes at the very end */

/* entries [0, count) are written before count grows, and never change */
static char *forms[REDACT_MAX];
static size_t form_len[REDACT_MAX];
static size_t form_pre[REDACT_MAX];  /* what of it a cut text must hold */
static unsigned char form_in[REDACT_MAX];
static size_t count;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

static void add_form(const char *s, size_t n, size_t pre, unsigned in)
{
	size_t c = __atomic_load_n(&count, __ATOMIC_ACQUIRE);
	if (!n || c == REDACT_MAX)
		return;
	for (size_t i = 0; i < c; i++)
		if (form_len[i] == n && form_in[i] == in &&
		    !memcmp(forms[i], s, n))
			return;
	char *copy = xmalloc(n + 1);
	memcpy(copy, s, n);
	copy[n] = '\0';
	forms[c] = copy;
	form_len[c] = n;
	form_pre[c] = pre < n ? pre : n;
	form_in[c] = (unsigned char)in;
	__atomic_store_n(&count, c + 1, __ATOMIC_RELEASE);
}

/* s as byte values between sep: the first REDACT_PREFIX of them are
 * what a cut one must hold */
static void add_values(const char *s, const char *sep)
{
	struct sbuf b = SBUF_INIT;
	size_t pre = 0;
	int nums = 0;
	for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
		sbuf_addf(&b, "%s%u", p == (const unsigned char *)s ? "" : sep, *p);
		if (++nums == REDACT_PREFIX)
			pre = b.len;
	}
	add_form(b.buf, b.len, pre ? pre : b.len, IN_TEXT | AT_END);
	sbuf_release(&b);
}

/* s as the inside of a quoted atom (quote '\'') or a string ('"'). */
static void escaped(struct sbuf *out, const char *s, char quote)
{
	for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
		if (*p == (unsigned char)quote || *p == '\\') {
			sbuf_addch(out, '\\');
			sbuf_addch(out, (char)*p);
		} else if (quote == '"' && *p == '\n') {
			sbuf_addstr(out, "\\n");
		} else if (quote == '"' && *p == '\t') {
			sbuf_addstr(out, "\\t");
		} else if (quote == '"' && *p == '\r') {
			sbuf_addstr(out, "\\r");
		} else if (quote == '\'' && (*p < 0x20 || *p == 0x7f)) {
			sbuf_addf(out, "\\x{%X}", *p);
		} else {
			sbuf_addch(out, (char)*p);
		}
	}
}

void redact_add(const char *s)
{
	if (!s || !*s)
		return;
	struct sbuf b = SBUF_INIT;
	size_t n = strlen(s);
	pthread_mutex_lock(&lock);
	/* as it is: an atom, a string or a binary, in the text and in the
	 * term (where bytes stand for themselves) */
	add_form(s, n, REDACT_PREFIX, IN_TEXT | IN_TERM | AT_END);
	escaped(&b, s, '\'');
	add_form(b.buf, b.len, REDACT_PREFIX, IN_TEXT | AT_END);
	sbuf_reset(&b);
	escaped(&b, s, '"');
	add_form(b.buf, b.len, REDACT_PREFIX, IN_TEXT | AT_END);
	sbuf_reset(&b);
	/* as byte values, Erlang's and Elixir's: for a text with no term
	 * behind it (a recording) */
	add_values(s, ",");
	add_values(s, ", ");
	/* a list of its bytes in the term: each a SMALL_INTEGER_EXT; a cut
	 * list ends in '...', never in its elements */
	for (size_t i = 0; i < n; i++) {
		sbuf_addch(&b, 'a');
		sbuf_addch(&b, s[i]);
	}
	add_form(b.buf, b.len, 2 * REDACT_PREFIX, IN_TERM);
	pthread_mutex_unlock(&lock);
	sbuf_release(&b);
}

/* f (m bytes) somewhere in t (n bytes).  Most texts are short, and
 * memmem's set-up (a table of shifts) cost more than the search: 18% of
 * a batch run's time with a cookie known.  A short text is scanned by
 * its first byte; a long one goes to memmem, linear whatever it holds. */
static bool has(const char *t, size_t n, const char *f, size_t m)
{
	if (n > 256)
		return memmem(t, n, f, m) != NULL;
	if (!m)
		return true;
	if (m > n)
		return false;
	const char *p = t, *last = t + (n - m);
	while (p <= last && (p = memchr(p, f[0], (size_t)(last - p) + 1))) {
		if (!memcmp(p + 1, f + 1, m - 1))
			return true;
		p++;
	}
	return false;
}

static bool holds(const char *text, size_t n, bool cut, unsigned in,
		  bool at_end)
{
	size_t c = __atomic_load_n(&count, __ATOMIC_ACQUIRE);
	for (size_t i = 0; i < c; i++) {
		if (!(form_in[i] & in))
			continue;
		size_t want = cut ? form_pre[i] : form_len[i];
		if (has(text, n, forms[i], want))
			return true;
		if (!at_end || !(form_in[i] & AT_END))
			continue;
		/* a cut that kept fewer of its first bytes: they end the text */
		for (size_t k = cut ? want - 1 : 0; k >= 3; k--)
			if (n >= k && !memcmp(text + n - k, forms[i], k))
				return true;
	}
	return false;
}

bool redact_holds(const char *text, size_t n, bool cut)
{
	return holds(text, n, cut, IN_TEXT, true);
}

bool redact_holds_term(const char *term, size_t n, bool cut, bool at_end)
{
	return term && holds(term, n, cut, IN_TERM, at_end);
}

void redact_reset(void)
{
	pthread_mutex_lock(&lock);
	size_t c = __atomic_load_n(&count, __ATOMIC_ACQUIRE);
	__atomic_store_n(&count, 0, __ATOMIC_RELEASE);
	for (size_t i = 0; i < c; i++) {
		free(forms[i]);
		forms[i] = NULL;
	}
	pthread_mutex_unlock(&lock);
}

static bool is_auth(const char *name)
{
	return name && !strcmp(name, "auth");
}

/*
 * auth answers a get_cookie call with {Ref, Cookie}: learn Cookie, as the
 * payload renders it ("{#Ref<0.1.2.3>,Cookie}").
 */
static void learn(const char *payload)
{
	const char *p = payload;
	if (strncmp(p, "{#Ref<", 6))
		return;
	p = strchr(p, '>');
	size_t n = p ? strlen(p) : 0;
	if (!p || n < 4 || p[1] != ',' || p[n - 1] != '}')
		return;
	const char *a = p + 2;
	size_t len = n - 3;
	if (len >= 2 && a[0] == '\'' && a[len - 1] == '\'') {
		a++;
		len -= 2;
	}
	static const char *const not_cookies[] = { "ok", "true", "false",
						   "nocookie", "undefined" };
	for (size_t i = 0; i < sizeof(not_cookies) / sizeof(*not_cookies); i++)
		if (strlen(not_cookies[i]) == len && !memcmp(a, not_cookies[i], len))
			return;
	char *cookie = xmalloc(len + 1);
	memcpy(cookie, a, len);
	cookie[len] = '\0';
	redact_add(cookie);
	free(cookie);
}

bool redact_event(struct event *e)
{
	if (!e->payload)
		return false;
	bool auth = is_auth(e->name) || is_auth(e->peer_name);
	if (auth && e->type == EV_SEND && is_auth(e->name))
		learn(e->payload);
	/* the text, and the bytes it was rendered from: the syntax may
	 * write a cookie's bytes in a way no form above foresees */
	if (!auth && !redact_holds(e->payload, strlen(e->payload), e->truncated) &&
	    !redact_holds_term(e->raw, e->raw_len, e->truncated,
			       e->raw_part & RAW_PAYLOAD))
		return false;
	e->payload = REDACT_TEXT;
	e->truncated = false;
	return true;
}
