/* settings.c - the gate's settings resolved once: the caller's value, else the policy's, else a default. */
#include "pipeline/settings.h"

void pg_gate_settings_resolve(pg_gate_settings *out, const pg_gate_given *given,
			      const pg_policy *p)
{
	static const pg_gate_given none;
	const pg_gate_given *g = given ? given : &none;

	*out = (pg_gate_settings)PG_GATE_SETTINGS_DEFAULT;
	if (p) {
		out->approve = p->auto_approve;
		out->boot_on_lava = p->boot_on_lava;
		if (p->merge_name)
			out->merge_name = p->merge_name;
		if (p->merge_email)
			out->merge_email = p->merge_email;
		if (p->build_timeout_minutes)
			out->build_timeout_s = p->build_timeout_minutes * 60u;
		if (p->boot_timeout_seconds)
			out->boot_timeout_s = p->boot_timeout_seconds;
		out->attest_key = p->attest_key;
		out->attest_gnupg_home = p->attest_gnupg_home;
		out->icecc = p->icecc;
	}
	/* then what the caller was given, which wins */
	if (g->tree)
		out->tree = g->tree;
	if (g->branch)
		out->branch = g->branch;
	if (g->merge_name)
		out->merge_name = g->merge_name;
	if (g->merge_email)
		out->merge_email = g->merge_email;
	if (g->attest_key) {
		out->attest_key = g->attest_key;
		out->attest_gnupg_home = g->attest_gnupg_home;
	}
	if (g->icecc)
		out->icecc = g->icecc;
	if (g->approve != PG_GATE_UNSET)
		out->approve = g->approve == PG_GATE_YES;
	if (g->boot_on_lava != PG_GATE_UNSET)
		out->boot_on_lava = g->boot_on_lava == PG_GATE_YES;
	if (g->boot_timeout_s)
		out->boot_timeout_s = g->boot_timeout_s;
	if (g->build_worktrees)
		out->build_worktrees = g->build_worktrees;
}

int pg_gate_settings_tree_path(pg_buf *out, const pg_gate_settings *s, const char *home)
{
	return s->tree ? pg_buf_puts(out, s->tree) : pg_buf_printf(out, "%s/linux", home);
}
