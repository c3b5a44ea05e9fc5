/* gate.c - the stage runner: each stage records its timing and findings; the first rejection stops it. */
#include "pipeline/stage.h"
#include "pipeline/attest.h"
#include "pipeline/provenance.h"
#include "common/digest.h"
#include "common/error.h"
#include "common/fs.h"

#include <time.h>
#include <unistd.h>

/*
 * The stages after verify, in the order they run.  A stage is a file
 * (stage_<name>.c), a declaration in stage.h and a row here; its flag is
 * how --stages and the server's config select it.
 */
static const struct stage {
	const char *name;     /* in the report, progress and --stages */
	unsigned flag;        /* enum pg_gate_stage */
	pg_stage_fn run;
} stages[] = {
	{ "merge", PG_GATE_MERGE, pg_stage_merge },
	{ "build", PG_GATE_BUILD, pg_stage_build },
	{ "boot", PG_GATE_BOOT, pg_stage_boot },
	{ "approve", PG_GATE_APPROVE, pg_stage_approve },
};

static uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

unsigned pg_gate_stage_flag(const char *name, size_t len)
{
	size_t i;

	for (i = 0; i < PG_ARRAY_SIZE(stages); i++)
		if (strlen(stages[i].name) == len && !memcmp(stages[i].name, name, len))
			return stages[i].flag;
	return 0;
}

bool pg_gate_stages_valid(unsigned set)
{
	/* 0, 1, 3, 7 or 15: the lowest bits, with no gap */
	return set <= PG_GATE_ALL && (set & (set + 1)) == 0;
}

static void run_init(pg_run *g, const pg_pull_spec *spec, const pg_policy *policy,
		     const pg_gate_opts *o)
{
	memset(g, 0, sizeof(*g));
	g->spec = spec;
	g->policy = policy;
	g->o = o;
	g->lock_fd = -1;
	g->pull_lock_fd = -1;
	pg_buf_init(&g->key, 0);
	pg_buf_init(&g->logs, 0);
	pg_buf_init(&g->tree_path, 0);
	pg_buf_init(&g->worktree, 0);
	pg_buf_init(&g->build_dir, 0);
	pg_buf_init(&g->home_env, 0);
	pg_buf_init(&g->distcc_env, 0);
	pg_buf_init(&g->icecc_env, 0);
	for (size_t i = 0; i < PG_ARRAY_SIZE(g->lava_env); i++)
		pg_buf_init(&g->lava_env[i], 0);
	pg_buf_init(&g->nonce, 0);
	pg_buf_init(&g->tools_key, 0);
	pg_buf_init(&g->base_boot, 0);
	pg_buf_init(&g->journal, 0);
	pg_buf_init(&g->select_path, 0);
	pg_buf_init(&g->select_key, 0);
}

/*
 * What a boot depends on besides the tree: the scripts and inputs of the
 * build and the boot, by content, and the tools' versions.  A boot of the
 * base is kept under it, so that a stand-in's boot never passes for a
 * real one, nor a boot by another compiler or QEMU.
 */
static int tools_key(pg_run *g)
{
	const char *const *lists[] = { pg_build_files, pg_run_boot_files(g) };
	pg_buf text = PG_BUF_INIT, path = PG_BUF_INIT;
	char hex[PG_SHA256_HEXSZ + 1];
	size_t l, i;
	int err = 0;

	for (l = 0; l < PG_ARRAY_SIZE(lists) && err == 0; l++)
		for (i = 0; lists[l][i] && err == 0; i++) {
			char *sha = NULL;

			pg_buf_clear(&path);
			if ((err = pg_buf_printf(&path, "%s/%s", g->o->datadir, lists[l][i])) == 0 &&
			    (err = pg_prov_file_sha256(&sha, path.ptr)) == 0)
				err = pg_buf_printf(&text, "%s %s\n", lists[l][i], sha ? sha : "-");
			free(sha);
		}
	if (err == 0)
		err = pg_buf_printf(&text, "%s\n%s\n", g->toolchain, g->qemu);
	/*
	 * A boot on a LAVA lab is not a boot in local QEMU, nor on another device
	 * type; one by this machine's dispatcher is one with its device configuration.
	 */
	if (err == 0 && g->o->settings.boot_on_lava)
		err = pg_buf_printf(&text, "lava %s\n", g->policy->lava_device_type ?
				    g->policy->lava_device_type : "qemu");
	if (err == 0 && g->o->settings.boot_on_lava && g->policy->lava_device) {
		char *sha = NULL;

		if ((err = pg_prov_file_sha256(&sha, g->policy->lava_device)) == 0)
			err = pg_buf_printf(&text, "device %s\n", sha ? sha : "-");
		free(sha);
	}
	if (err == 0 && (err = pg_sha256_hex(hex, text.ptr, text.len)) == 0)
		err = pg_buf_puts(&g->tools_key, hex);
	pg_buf_release(&text);
	pg_buf_release(&path);
	return err;
}

/* With the lock: clean up after a run that died, and say so. */
static int recover(pg_run *g)
{
	pg_buf what = PG_BUF_INIT;
	int err = pg_journal_recover(g->o->home, g->slot, g->key.ptr, &what);

	if (err == 0 && what.len)
		pg_run_progress(g, "merge", "%s", what.ptr);
	pg_buf_release(&what);
	return err;
}

/*
 * Booting on LAVA: lava.sh's settings from the policy, as data in its
 * environment (the token stays in its file: only the file's name is passed).
 */
static int lava_env(pg_run *g, size_t *n)
{
	const pg_policy *p = g->policy;
	const char *names[] = { "PG_LAVA_ARTIFACTS_URL", "PG_LAVA_URL", "PG_LAVA_TOKEN_FILE",
				"PG_LAVA_DEVICE_TYPE", "PG_LAVA_DEVICE" };
	const char *values[] = { p->lava_artifacts_url, p->lava_url, p->lava_token_file,
				 p->lava_device_type, p->lava_device };
	size_t i;
	int err;

	_Static_assert(PG_ARRAY_SIZE(names) == PG_ARRAY_SIZE(g->lava_env), "one buffer a name");
	if (!g->o->settings.boot_on_lava)
		return 0;
	if (!p->lava_artifacts_url && !p->lava_device)
		return pg_error_set(PG_EINVALID, "the policy boots on LAVA but names no "
				    "pipeline.lava.artifacts-url for the lab to download the kernel from");
	for (i = 0; i < PG_ARRAY_SIZE(names); i++) {
		if (!values[i])
			continue;
		if ((err = pg_buf_printf(&g->lava_env[i], "%s=%s", names[i], values[i])) < 0)
			return err;
		g->env[(*n)++] = g->lava_env[i].ptr;
	}
	return 0;
}

/* Everything a stage needs, before the first one: paths, the lock, the tree. */
static int prepare(pg_run *g)
{
	const pg_gate_opts *o = g->o;
	size_t i, n;
	int err;

	if ((err = pg_buf_printf(&g->home_env, "PULLGATE_HOME=%s", o->home)) < 0)
		return err;
	/* the policy's distcc hosts, checked by its schema: build.sh compiles on them */
	for (i = 0; i < g->policy->ndistcc_hosts; i++)
		if ((err = pg_buf_printf(&g->distcc_env, "%s%s", i ? " " : "PG_DISTCC_HOSTS=",
					 g->policy->distcc_hosts[i])) < 0)
			return err;
	/* the iceccd the compiles go through, checked by the schema or the CLI: data to build.sh */
	if (o->settings.icecc &&
	    (err = pg_buf_printf(&g->icecc_env, "PG_ICECC=%s", o->settings.icecc)) < 0)
		return err;
	/* the scripts share our state directory and stream make's output to us */
	g->env[0] = g->home_env.ptr;
	g->env[1] = "PG_BUILD_STREAM=1";
	n = 2;
	if (g->distcc_env.len)
		g->env[n++] = g->distcc_env.ptr;
	if (g->icecc_env.len)
		g->env[n++] = g->icecc_env.ptr;
	if ((err = lava_env(g, &n)) < 0)
		return err;
	g->env[n] = NULL;
	/* a build worktree of our own (libgit2 makes it, we its parent), after a dead run's cleanup */
	if ((err = pg_run_tree_path(&g->tree_path, o)) < 0 ||
	    (err = pg_run_take_slot(g)) < 0 ||
	    (err = recover(g)) < 0 ||
	    (err = pg_tree_open(&g->tree, g->tree_path.ptr, o->settings.branch)) < 0)
		return err;
	/* find out now, not after a build, that approval could not move the branch */
	if (o->settings.approve && (o->stages & PG_GATE_APPROVE) &&
	    (err = pg_tree_can_advance(g->tree)) < 0)
		return err;
	/* this run's nonce, and the tools it will run (the base boot's cache key) */
	if ((err = pg_random_hex(&g->nonce, 16)) < 0 ||
	    (err = pg_prov_tool_version(&g->toolchain, "aarch64-linux-gnu-gcc")) < 0 ||
	    (err = pg_prov_tool_version(&g->qemu, "qemu-system-aarch64")) < 0 ||
	    (err = tools_key(g)) < 0)
		return err;
	return pg_journal_begin(g);
}

static void run_release(pg_run *g)
{
	if (g->tree && !g->keep_refs &&
	    pg_tree_drop_pull_refs(g->tree, g->key.ptr, g->report->tag) < 0)
		pg_error_clear(); /* the journal stays: the next run cleans up */
	else /* the refs are as they must stay: nothing is left for a recovery */
		pg_journal_end(g);
	pg_tree_free(g->tree);
	free(g->toolchain);
	free(g->qemu);
	pg_buf_release(&g->nonce);
	pg_buf_release(&g->tools_key);
	pg_buf_release(&g->base_boot);
	pg_buf_release(&g->journal);
	pg_buf_release(&g->select_path);
	pg_buf_release(&g->select_key);
	/* the pull's lock last: its refs are as they must stay by now */
	if (g->lock_fd >= 0)
		close(g->lock_fd);
	if (g->pull_lock_fd >= 0)
		close(g->pull_lock_fd);
	pg_buf_release(&g->key);
	pg_buf_release(&g->logs);
	pg_buf_release(&g->tree_path);
	pg_buf_release(&g->worktree);
	pg_buf_release(&g->build_dir);
	pg_buf_release(&g->home_env);
	pg_buf_release(&g->distcc_env);
	pg_buf_release(&g->icecc_env);
	for (size_t i = 0; i < PG_ARRAY_SIZE(g->lava_env); i++)
		pg_buf_release(&g->lava_env[i]);
}

/*
 * Record the verdict: the report as JSON (docs/report-schema.md), replaced
 * atomically, in the run's log directory beside the stage logs.
 */
static int write_report(const char *logs, const pg_report *r)
{
	pg_buf path = PG_BUF_INIT, json = PG_BUF_INIT;
	int err;

	if ((err = pg_buf_printf(&path, "%s/report.json", logs)) == 0 &&
	    (err = pg_report_format_json(&json, r)) == 0)
		err = pg_write_file_atomic(path.ptr, json.ptr, json.len);
	pg_buf_release(&path);
	pg_buf_release(&json);
	return err;
}

/*
 * The report, and for an approved merge its signed attestation: a note
 * that hashes the report as written, so the report goes first.  Should
 * the note fail, the report is written again saying so.
 */
static int attest_and_write_report(pg_run *g)
{
	pg_buf home = PG_BUF_INIT, path = PG_BUF_INIT;
	const char *key = g->o->settings.attest_key;
	int err = 0, sign = 0;

	if (g->report->approved &&
	    (err = sign = pg_attest_plan(&home, g->report, key, g->o->settings.attest_gnupg_home,
					 g->o->home)) < 0)
		goto done;
	if ((err = write_report(g->logs.ptr, g->report)) < 0 || !sign)
		goto done;
	pg_run_progress(g, "approve", "signing the attestation with key %s", key);
	if ((err = pg_buf_printf(&path, "%s/report.json", g->logs.ptr)) < 0 ||
	    (err = pg_attest_sign(g->report, g->tree_path.ptr, path.ptr, "gate", key,
				  home.ptr)) <= 0)
		goto done;
	pg_run_progress(g, "approve", "%s", g->report->attestation);
	err = write_report(g->logs.ptr, g->report);
done:
	pg_buf_release(&home);
	pg_buf_release(&path);
	return err;
}

/*
 * The gate's own rule, whatever the policy says: only a tag whose
 * signature verified good, by a signer the policy trusts for this
 * repository and tag, with nothing else wrong with it, is merged.  A
 * policy that turns tag-signature off or down, or has no keyring, leaves
 * every pull here.
 */
static int trusted_tag(pg_report *r)
{
	if (r->tag_signer)
		return 0;
	return pg_report_add(NULL, r, PG_CHECK_TAG_SIGNATURE, PG_SEV_ERROR, NULL,
			     "the gate merges only a tag whose signature verified good, by a "
			     "signer the policy trusts for this repository and tag, with no "
			     "tag-signature finding: '%s' has none such", r->tag);
}

/* Run the selected stages in order until one does not pass. */
static int run_stages(pg_run *g)
{
	const pg_gate_opts *o = g->o;
	pg_stage *st = NULL;
	size_t i;
	int err = 0;

	for (i = 0; i < PG_ARRAY_SIZE(stages); i++) {
		uint64_t ts = now_ms();

		if (!(o->stages & stages[i].flag))
			continue;
		if (o->cancel && *o->cancel)
			return pg_error_set(PG_ECANCELLED, "cancelled before the %s stage",
					    stages[i].name);
		if ((err = pg_report_add_stage(&st, g->report, stages[i].name)) < 0)
			return err;
		pg_run_progress(g, stages[i].name, "starting");
		err = stages[i].run(g, st);
		st->elapsed_ms = now_ms() - ts;
		if (err < 0) {
			pg_stage_set(st, PG_STAGE_ERROR, NULL, "%s", pg_error_last());
			return err;
		}
		pg_run_progress(g, stages[i].name, "%s", pg_stage_status_name(st->status));
		if (st->status != PG_STAGE_PASSED)
			break; /* failed, skipped (already merged) or waiting */
	}
	return 0;
}

int pg_gate_run(pg_report **out, const pg_pull_spec *spec, const pg_policy *policy,
		const pg_gate_opts *o)
{
	pg_run g;
	pg_stage *st = NULL;
	char msg[1024];
	uint64_t t0 = now_ms();
	int err;

	*out = NULL;
	if (o->explain_tests && o->stages != PG_GATE_MERGE)
		return pg_error_set(PG_EINVALID, "explaining the tests runs verify and merge only");
	if (!pg_gate_stages_valid(o->stages))
		return pg_error_set(PG_EINVALID, "the stages must run in order from merge, without a gap "
				    "(merge, build, boot, approve): nothing is booted unbuilt or approved untested");
	run_init(&g, spec, policy, o);

	pg_run_progress(&g, "verify", "verifying %s", spec->tag);
	if ((err = pg_verify(&g.report, spec, policy, o->home)) < 0)
		return err;
	/* the verdict is recorded in the run's log directory, also for a pull stopped at verify */
	if ((err = pg_gate_pull_key(&g.key, g.report->tag)) < 0 ||
	    (err = pg_run_logs_dir(&g.logs, o, g.key.ptr)) < 0 ||
	    (err = pg_report_add_stage(&st, g.report, "verify")) < 0)
		goto done;
	st->elapsed_ms = now_ms() - t0;
	if (!(g.report->run_dir = pg_strdup(g.logs.ptr))) {
		err = PG_ENOMEM;
		goto done;
	}
	/* a tag pushed again since the push record named it is not what was announced */
	if (pg_report_verdict(g.report) == PG_VERDICT_ACCEPT && (o->stages & PG_GATE_ALL) &&
	    ((err = pg_gate_expected_tag(g.report, o->expect_tag, "nothing was merged")) < 0 ||
	     (err = trusted_tag(g.report)) < 0))
		goto done;
	if (pg_report_verdict(g.report) != PG_VERDICT_ACCEPT)
		err = pg_stage_set(st, PG_STAGE_FAILED, NULL, "%zu error%s",
				   pg_report_count(g.report, PG_SEV_ERROR),
				   pg_report_count(g.report, PG_SEV_ERROR) == 1 ? "" : "s");
	else
		err = pg_stage_set(st, PG_STAGE_PASSED, NULL, "%zu commits", g.report->ncommits);
	if (err == 0)
		pg_run_progress(&g, "verify", "%s", pg_stage_status_name(st->status));
	if (err == 0 && st->status == PG_STAGE_PASSED && (o->stages & PG_GATE_ALL) &&
	    (err = prepare(&g)) == 0)
		err = run_stages(&g);
	/* --explain-tests: what the build would select, from the merge the stage made */
	if (err == 0 && o->explain_tests && g.report->has_merge && g.tree)
		err = pg_run_select(&g);
	if (err == 0)
		err = attest_and_write_report(&g);
done:
	/* cleanup may meet errors of its own: keep the message of the one that stopped us */
	snprintf(msg, sizeof(msg), "%s", err < 0 ? pg_error_last() : "");
	run_release(&g);
	if (err < 0) {
		pg_report_free(g.report);
		return pg_error_set(err, "%s", msg);
	}
	*out = g.report;
	return 0;
}
