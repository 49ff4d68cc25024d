/* Unit tests: the external-format validator that guards ei's decoders. */
#include <ei.h>

#include "tap.h"
#include "wire.h"

static ei_x_buff fresh(void)
{
	ei_x_buff x;
	ei_x_new_with_version(&x);
	return x;
}

int main(void)
{
	ei_x_buff x;
	plan(12);

	x = fresh();
	ei_x_encode_tuple_header(&x, 3);
	ei_x_encode_atom(&x, "beamscope_batch");
	ei_x_encode_list_header(&x, 2);
	ei_x_encode_long(&x, 1);
	ei_x_encode_binary(&x, "abc", 3);
	ei_x_encode_empty_list(&x);
	ei_x_encode_map_header(&x, 1);
	ei_x_encode_string(&x, "k");
	ei_x_encode_double(&x, 1.5);
	ok(wire_check(x.buff, (size_t)x.index) == 0, "a valid term passes");
	ok(wire_check(x.buff, (size_t)x.index - 1) < 0, "one byte short fails");
	ok(wire_check(x.buff, (size_t)x.index + 0) == 0 &&
	   wire_check(x.buff, 1) < 0, "the version byte alone fails");
	char longer[512];
	memcpy(longer, x.buff, (size_t)x.index);
	longer[x.index] = 'j';
	ok(wire_check(longer, (size_t)x.index + 1) < 0, "trailing bytes fail");
	ei_x_free(&x);

	erlang_pid p = { .num = 1, .serial = 0, .creation = 2 };
	strcpy(p.node, "a@b");
	erlang_ref ref = { .len = 3, .n = { 1, 2, 3 }, .creation = 2 };
	strcpy(ref.node, "a@b");
	x = fresh();
	ei_x_encode_tuple_header(&x, 3);
	ei_x_encode_pid(&x, &p);
	ei_x_encode_ref(&x, &ref);
	ei_x_encode_longlong(&x, 1LL << 62);
	ok(wire_check(x.buff, (size_t)x.index) == 0, "pids, refs, bignums pass");
	ei_x_free(&x);

	/* a binary that claims more than there is */
	unsigned char bin[] = { 131, 'm', 0xff, 0xff, 0xff, 0xff, 'a' };
	ok(wire_check((char *)bin, sizeof(bin)) < 0, "oversized binary length fails");
	/* a list that claims 4 billion elements */
	unsigned char lst[] = { 131, 'l', 0xff, 0xff, 0xff, 0xff, 'j' };
	ok(wire_check((char *)lst, sizeof(lst)) < 0, "oversized list length fails");
	/* nesting deeper than the limit */
	char deep[WIRE_MAX_DEPTH * 2 + 8];
	size_t n = 0;
	deep[n++] = (char)131;
	for (int i = 0; i < WIRE_MAX_DEPTH + 1; i++) {
		deep[n++] = 'h';
		deep[n++] = 1;
	}
	deep[n++] = 'j';
	ok(wire_check(deep, n) < 0, "nesting beyond the limit fails");
	/* a reference with too many words for ei */
	unsigned char rf[] = { 131, 'Z', 0, 9, 's', 1, 'a', 0, 0, 0, 1 };
	ok(wire_check((char *)rf, sizeof(rf)) < 0, "reference with 9 words fails");
	/* an atom longer than ei holds */
	unsigned char at[4 + 2000] = { 131, 'v', 0x07, 0xd0 };
	memset(at + 4, 'a', 2000);
	ok(wire_check((char *)at, sizeof(at)) < 0, "overlong atom fails");
	/* funs never come from the tracer */
	unsigned char fn[] = { 131, 'q', 's', 1, 'm', 's', 1, 'f', 'a', 1 };
	ok(wire_check((char *)fn, sizeof(fn)) < 0, "funs are refused");
	unsigned char unknown[] = { 131, 'z' };
	ok(wire_check((char *)unknown, sizeof(unknown)) < 0, "unknown tag fails");
	return done_testing();
}
