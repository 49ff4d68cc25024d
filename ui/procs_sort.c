/*
 * procs_sort: the process table's rows in the order of a column.
 */
#include <stdlib.h>
#include <string.h>

#include "app.h"
#include "view_procs.h"

/* the order qsort is asked for: one sort at a time, on the loop */
static int sort_col, sort_asc;

static int cmp_ul(unsigned long x, unsigned long y)
{
	return x < y ? -1 : x > y;
}

static int cmp_l(long x, long y)
{
	return x < y ? -1 : x > y;
}

static int cmp_rows(const void *pa, const void *pb)
{
	const struct proc *x = *(struct proc *const *)pa, *y = *(struct proc *const *)pb;
	int c = 0;
	switch ((enum proc_col)sort_col) {
	case COL_PID:
		c = cmp_ul(x->pid.num, y->pid.num);
		break;
	case COL_NODE:
		c = cmp_ul(x->pid.node, y->pid.node);
		break;
	case COL_NAME:
		c = strcmp(store_proc_title(x), store_proc_title(y));
		break;
	case COL_CURRENT:
		c = strcmp(x->current ? x->current : "", y->current ? y->current : "");
		break;
	case COL_SENDS: c = cmp_ul(x->sends, y->sends); break;
	case COL_SPS: c = cmp_ul(x->rsends, y->rsends); break;
	case COL_RECEIVES: c = cmp_ul(x->receives, y->receives); break;
	case COL_RPS: c = cmp_ul(x->rreceives, y->rreceives); break;
	case COL_SPAWNS: c = cmp_ul(x->spawns, y->spawns); break;
	case COL_MQ: c = x->mqlen < y->mqlen ? -1 : x->mqlen > y->mqlen; break;
	case COL_ALARMS: c = cmp_ul(x->alarms, y->alarms); break;
	case COL_MEM: c = cmp_l(x->memory.bytes, y->memory.bytes); break;
	case COL_REDS: c = cmp_l(x->reds, y->reds); break;
	case COL_REDSPS: c = cmp_l(x->rreds, y->rreds); break;
	case COL_HEAP: c = cmp_l(x->heap.bytes, y->heap.bytes); break;
	case COL_SENT30:
		c = cmp_ul(x->hist ? x->hist->sum_sends : 0,
			   y->hist ? y->hist->sum_sends : 0);
		break;
	case COL_RECV30:
		c = cmp_ul(x->hist ? x->hist->sum_receives : 0,
			   y->hist ? y->hist->sum_receives : 0);
		break;
	case COL__COUNT: break;
	}
	if (!sort_asc)
		c = -c;
	if (!c)   /* a stable order for equal keys: by pid */
		c = cmp_ul(x->pid.num, y->pid.num);
	return c;
}

void procs_sort_rows(struct proc **rows, size_t n, int col, bool asc)
{
	sort_col = col;
	sort_asc = asc;
	if (n > 1)
		qsort(rows, n, sizeof(*rows), cmp_rows);
}
