/* reload.c - SIGHUP: a new configuration and policy replace the old ones, or nothing changes. */
#include "server/web.h"
#include "server/http_client.h"
#include "server/kcidb_submit.h"
#include "common/array.h"
#include "common/error.h"
#include "common/str.h"

/*
 * A request or a job that began with the old configuration may still read
 * it: what a reload replaces is kept until the server stops.  A reload is
 * rare and small, so that costs a few kilobytes each time.
 */
enum retired_kind { RETIRED_CONFIG, RETIRED_POLICY, RETIRED_SECRET };

struct pg_retired {
	enum retired_kind kind;
	void *p;
};

static int retire(pg_server *s, enum retired_kind kind, void *p)
{
	int err;

	if (!p)
		return 0;
	if ((err = PG_ARRAY_GROW(s->retired, s->nretired + 1, s->retired_alloc)) < 0)
		return err;
	s->retired[s->nretired].kind = kind;
	s->retired[s->nretired++].p = p;
	return 0;
}

void pg_server_free_retired(pg_server *s)
{
	size_t i;

	for (i = 0; i < s->nretired; i++) {
		switch (s->retired[i].kind) {
		case RETIRED_CONFIG:
			pg_config_free(s->retired[i].p);
			break;
		case RETIRED_POLICY:
			pg_policy_free(s->retired[i].p);
			break;
		case RETIRED_SECRET:
			pg_free_secret(s->retired[i].p);
			break;
		}
	}
	free(s->retired);
	s->retired = NULL;
	s->nretired = s->retired_alloc = 0;
	pg_config_free(s->owned_config);
	s->owned_config = NULL;
}

static bool same(const char *a, const char *b)
{
	return (!a && !b) || (a && b && !strcmp(a, b));
}

/*
 * The intake section as old has it, whole, in place of c's: the intake's
 * thread follows old's log, and a section removed or naming another log
 * would have it read on, its records consumed, with nothing watched.
 */
static int keep_intake(pg_intake_conf *c, const pg_intake_conf *old)
{
	pg_intake_conf k;

	memset(&k, 0, sizeof(k));
	k.fetch_seconds = old->fetch_seconds;
	if ((old->log && !(k.log = pg_strdup(old->log))) ||
	    (old->url_base && !(k.url_base = pg_strdup(old->url_base))) ||
	    pg_str_list_dup(&k.repos, &k.nrepos, old->repos, old->nrepos) < 0 ||
	    pg_str_list_dup(&k.tags, &k.ntags, old->tags, old->ntags) < 0) {
		pg_intake_conf_release(&k);
		return pg_error_oom();
	}
	pg_intake_conf_release(c);
	*c = k;
	return 0;
}

/* Keys only a restart applies keep their running values in c; their names go to restart. */
static int keep_restart_keys(pg_config *c, const pg_config *old, pg_buf *restart)
{
	char *state = NULL, *address = NULL;
	int err = 0;

#define NOTE(name) \
	do { \
		if ((err = pg_buf_printf(restart, "%s%s", restart->len ? ", " : "", name)) < 0) \
			goto done; \
	} while (0)
	if (!same(c->address, old->address) || c->port != old->port)
		NOTE("listen");
	if (!same(c->state, old->state))
		NOTE("state");
	if (c->stages != old->stages)
		NOTE("pipeline.stages");
	if (c->verify_workers != old->verify_workers)
		NOTE("pipeline.verify-workers");
	if (c->build_worktrees != old->build_worktrees)
		NOTE("pipeline.build-worktrees");
	if (c->each_on_head != old->each_on_head)
		NOTE("pipeline.queue");
	if (c->session_hours != old->session_hours)
		NOTE("session.hours");
	/* the intake's thread follows one log: its other keys apply at its next read */
	if (!same(c->intake.log, old->intake.log)) {
		NOTE("intake.transparency.log");
		if ((err = keep_intake(&c->intake, &old->intake)) < 0)
			goto done;
	}
#undef NOTE
	if (!(address = pg_strdup(old->address)) || (old->state && !(state = pg_strdup(old->state)))) {
		err = PG_ENOMEM;
		goto done;
	}
	free(c->address);
	free(c->state);
	c->address = address;
	c->state = state;
	address = state = NULL;
	c->port = old->port;
	c->stages = old->stages;
	c->verify_workers = old->verify_workers;
	c->build_worktrees = old->build_worktrees;
	c->each_on_head = old->each_on_head;
	c->session_hours = old->session_hours;
done:
	free(address);
	free(state);
	return err;
}

int pg_server_reload(pg_server *s, pg_config *c, pg_buf *restart)
{
	pg_policy *policy = NULL;
	char *gen = NULL, *push = NULL, *mail = NULL;
	pg_worker_opts wo = PG_WORKER_OPTS_INIT;
	const pg_config *old = s->config;
	int err;

	/* everything that can fail comes first: until the swap nothing changes */
	if (c->kcidb_submit.url && (err = pg_http_client_ready()) < 0)
		goto fail;
	if ((err = c->policy ? pg_policy_load(&policy, c->policy) :
	     pg_policy_new_default(&policy)) < 0)
		goto fail;
	if ((!c->push_secret || !c->mail_secret) &&
	    (err = pg_server_hook_secret(&gen, s->state)) < 0)
		goto fail;
	if (!(push = pg_strdup(c->push_secret ? c->push_secret : gen)) ||
	    !(mail = pg_strdup(c->mail_secret ? c->mail_secret : gen))) {
		err = PG_ENOMEM;
		goto fail;
	}
	if ((err = keep_restart_keys(c, old, restart)) < 0 ||
	    (err = PG_ARRAY_GROW(s->retired, s->nretired + 4, s->retired_alloc)) < 0 ||
	    (err = pg_notify_reload(s->notify, c, policy)) < 0)
		goto fail;

	/*
	 * Published with release stores: a thread that reads a new pointer
	 * sees what it points to.  The old ones are retired, not freed.
	 */
	retire(s, RETIRED_POLICY, s->policy);
	retire(s, RETIRED_SECRET, s->push_secret);
	retire(s, RETIRED_SECRET, s->mail_secret);
	retire(s, RETIRED_CONFIG, s->owned_config);
	__atomic_store_n(&s->policy, policy, __ATOMIC_RELEASE);
	__atomic_store_n(&s->push_secret, push, __ATOMIC_RELEASE);
	__atomic_store_n(&s->mail_secret, mail, __ATOMIC_RELEASE);
	__atomic_store_n(&s->config, c, __ATOMIC_RELEASE);
	s->owned_config = c;
	wo.policy = policy;
	wo.tree = c->tree;
	wo.branch = c->branch;
	wo.merge_name = c->merge_name;
	wo.merge_email = c->merge_email;
	wo.public_base = c->public_base;
	wo.attest_key = c->attest_key;
	wo.attest_gnupg_home = c->attest_gnupg_home;
	wo.index_cache_size = c->limits.index_cache_size;
	wo.index_memory = c->limits.index_memory;
	wo.verify_memory = c->limits.verify_memory;
	pg_worker_reload(s->worker, &wo);
	/* a new URL or token applies to the next try; none configured now empties the outbox */
	pg_submit_wake(s->submit, 0);
	pg_free_secret(gen);
	return 0;
fail:
	pg_policy_free(policy);
	pg_free_secret(gen);
	pg_free_secret(push);
	pg_free_secret(mail);
	return err;
}
