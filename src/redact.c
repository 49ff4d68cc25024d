/* redact: see redact.h. */
#include "redact.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sbuf.h"
#include "xalloc.h"

#define REDACT_MAX 256

/* entries [0, count) are written before count grows, and never change */
static char *forms[REDACT_MAX];
static size_t form_len[REDACT_MAX];
static size_t form_pre[REDACT_MAX];  /* what of it a cut text must hold */
static size_t count;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

static void add_form(const char *s, size_t n, size_t pre)
{
	size_t c = __atomic_load_n(&count, __ATOMIC_ACQUIRE);
	if (!n || c == REDACT_MAX)
		return;
	for (size_t i = 0; i < c; i++)
		if (form_len[i] == n && !memcmp(forms[i], s, n))
			return;
	char *copy = xmalloc(n + 1);
	memcpy(copy, s, n);
	copy[n] = '\0';
	forms[c] = copy;
	form_len[c] = n;
	form_pre[c] = pre < n ? pre : n;
	__atomic_store_n(&count, c + 1, __ATOMIC_RELEASE);
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
	pthread_mutex_lock(&lock);
	add_form(s, strlen(s), REDACT_PREFIX);
	escaped(&b, s, '\'');
	add_form(b.buf, b.len, REDACT_PREFIX);
	sbuf_reset(&b);
	escaped(&b, s, '"');
	add_form(b.buf, b.len, REDACT_PREFIX);
	sbuf_reset(&b);
	/* as byte values: a cut one must still hold the first four */
	size_t pre = 0;
	int nums = 0;
	for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
		sbuf_addf(&b, "%s%u", p == (const unsigned char *)s ? "" : ",", *p);
		if (++nums == REDACT_PREFIX)
			pre = b.len;
	}
	add_form(b.buf, b.len, pre ? pre : b.len);
	pthread_mutex_unlock(&lock);
	sbuf_release(&b);
}

bool redact_holds(const char *text, size_t n, bool cut)
{
	size_t c = __atomic_load_n(&count, __ATOMIC_ACQUIRE);
	for (size_t i = 0; i < c; i++) {
		size_t want = cut ? form_pre[i] : form_len[i];
		if (memmem(text, n, forms[i], want))
			return true;
		/* a cut that kept fewer of its first bytes: they end the text */
		for (size_t k = cut ? want - 1 : 0; k >= 3; k--)
			if (n >= k && !memcmp(text + n - k, forms[i], k))
				return true;
	}
	return false;
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
	if (!auth && !redact_holds(e->payload, strlen(e->payload), e->truncated))
		return false;
	e->payload = REDACT_TEXT;
	e->truncated = false;
	return true;
}
