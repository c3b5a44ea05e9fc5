/* report_evidence.c - the gate's evidence in a report: provenance per stage, suites on base and merge. */
#include "report/report.h"
#include "common/array.h"
#include "common/error.h"

int pg_provenance_set(char **field, const char *value)
{
	char *copy = NULL;

	if (value && !(copy = pg_strdup(value)))
		return PG_ENOMEM;
	free(*field);
	*field = copy;
	return 0;
}

static void provenance_release(pg_provenance *p)
{
	size_t i;

	for (i = 0; i < p->nfiles; i++) {
		free(p->files[i].path);
		free(p->files[i].sha256);
	}
	free(p->files);
	free(p->stage);
	free(p->tree);
	free(p->toolchain);
	free(p->qemu);
	free(p->config_sha256);
	free(p->image_sha256);
	free(p->nonce);
	free(p->log);
	free(p->farm_env);
	free(p->farm);
}

void pg_report_free_evidence(pg_report *r)
{
	size_t i;

	for (i = 0; i < r->nprovenance; i++)
		provenance_release(&r->provenance[i]);
	free(r->provenance);
	for (i = 0; i < r->nsuites; i++) {
		free(r->suites[i].name);
		free(r->suites[i].verdict);
	}
	free(r->suites);
	for (i = 0; i < r->nselected; i++) {
		pg_selected *s = &r->selected[i];

		free(s->option);
		free(s->path);
		free(s->source);
		free(s->depends);
		free(s->reason);
		free(s->suites);
	}
	free(r->selected);
	free(r->selection_note);
	free(r->tag_signer);
	free(r->run_dir);
	free(r->base_boot);
	free(r->attestation);
}

int pg_report_add_provenance(pg_provenance **out, pg_report *r, const char *stage)
{
	pg_provenance *p;
	int err;

	*out = NULL;
	if ((err = PG_ARRAY_GROW(r->provenance, r->nprovenance + 1, r->provenance_alloc)) < 0)
		return err;
	p = &r->provenance[r->nprovenance];
	memset(p, 0, sizeof(*p));
	p->exit_status = -1;
	if (!(p->stage = pg_strdup(stage)))
		return PG_ENOMEM;
	r->nprovenance++;
	*out = p;
	return 0;
}

int pg_provenance_add_file(pg_report *r, pg_provenance *p, const char *path,
			   const char *sha256, bool shipped)
{
	pg_prov_file *f;
	int err;

	if ((err = PG_ARRAY_GROW(p->files, p->nfiles + 1, p->files_alloc)) < 0)
		return err;
	f = &p->files[p->nfiles];
	memset(f, 0, sizeof(*f));
	if (!(f->path = pg_strdup(path)) || (sha256 && !(f->sha256 = pg_strdup(sha256)))) {
		free(f->path);
		return PG_ENOMEM;
	}
	f->shipped = shipped;
	p->nfiles++;
	if (!shipped)
		p->simulated = r->simulated = true;
	return 0;
}

int pg_report_add_suite(pg_report *r, const char *name, const pg_suite_counts *base,
			const pg_suite_counts *merge, const char *verdict)
{
	pg_suite_result *s;
	int err;

	if ((err = PG_ARRAY_GROW(r->suites, r->nsuites + 1, r->suites_alloc)) < 0)
		return err;
	s = &r->suites[r->nsuites];
	memset(s, 0, sizeof(*s));
	if (!(s->name = pg_strdup(name)) || !(s->verdict = pg_strdup(verdict))) {
		free(s->name);
		return PG_ENOMEM;
	}
	if ((s->on_base = base != NULL))
		s->base = *base;
	if ((s->on_merge = merge != NULL))
		s->merge = *merge;
	r->nsuites++;
	return 0;
}

const char *pg_selected_status_name(enum pg_selected_status s)
{
	static const char *const names[] = {
		[PG_SELECTED_ADDED] = "added",     [PG_SELECTED_ENABLED] = "enabled",
		[PG_SELECTED_SKIPPED] = "skipped", [PG_SELECTED_IN_BASE] = "in-base",
		[PG_SELECTED_CAPPED] = "capped",   [PG_SELECTED_REFUSED] = "refused",
	};

	return (size_t)s < PG_ARRAY_SIZE(names) ? names[s] : "unknown";
}

int pg_report_add_selected(pg_selected **out, pg_report *r, const char *option,
			   const char *path, const char *source, bool test,
			   enum pg_selected_status status)
{
	pg_selected *s;
	int err;

	if (out)
		*out = NULL;
	if ((err = PG_ARRAY_GROW(r->selected, r->nselected + 1, r->selected_alloc)) < 0)
		return err;
	s = &r->selected[r->nselected];
	memset(s, 0, sizeof(*s));
	if (!(s->option = pg_strdup(option)) || (path && !(s->path = pg_strdup(path))) ||
	    (source && !(s->source = pg_strdup(source)))) {
		free(s->option);
		free(s->path);
		return PG_ENOMEM;
	}
	s->test = test;
	s->status = status;
	r->has_selection = true;
	r->nselected++;
	if (out)
		*out = s;
	return 0;
}
