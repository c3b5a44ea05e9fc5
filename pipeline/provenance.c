/* provenance.c - what a stage ran: its scripts against the shipped ones, the tools' versions, file hashes. */
#include "pipeline/provenance.h"
#include "common/digest.h"
#include "common/error.h"
#include "common/spawn.h"

const char *const pg_build_files[] = {
	"scripts/kernel/build.sh", "scripts/kernel/lib.sh", "qemu-images/kernel.config", NULL,
};

const char *const pg_boot_files[] = {
	"scripts/kernel/boot.sh", "scripts/kernel/lib.sh", "qemu-images/mkinitramfs.sh",
	"qemu-images/init.c", "qemu-images/initramfs.list", NULL,
};

const char *const pg_lava_boot_files[] = {
	"scripts/kernel/lava.sh", "scripts/kernel/lib.sh", "qemu-images/mkinitramfs.sh",
	"qemu-images/init.c", "qemu-images/initramfs.list", NULL,
};

static const char *shipped_sha256(const char *path)
{
	size_t i;

	for (i = 0; i < pg_nshipped_files; i++)
		if (!strcmp(pg_shipped_files[i].path, path))
			return pg_shipped_files[i].sha256;
	return NULL;
}

int pg_prov_file_sha256(char **out, const char *path)
{
	char hex[PG_SHA256_HEXSZ + 1];

	*out = NULL;
	if (pg_sha256_file(hex, path) < 0) {
		pg_error_clear();
		return 0;
	}
	return (*out = pg_strdup(hex)) ? 0 : PG_ENOMEM;
}

int pg_prov_files(pg_report *r, pg_provenance *p, const char *datadir,
		  const char *const *files)
{
	pg_buf full = PG_BUF_INIT;
	bool stand_in = false;
	size_t i;
	int err = 0;

	for (i = 0; files[i] && err == 0; i++) {
		const char *want = shipped_sha256(files[i]);
		char *sha = NULL;

		pg_buf_clear(&full);
		if ((err = pg_buf_printf(&full, "%s/%s", datadir, files[i])) < 0 ||
		    (err = pg_prov_file_sha256(&sha, full.ptr)) < 0)
			break;
		if (i == 0)
			stand_in = !sha || !want || strcmp(sha, want);
		if (i > 0 && !sha && stand_in)
			continue; /* a stand-in script needs none of the shipped one's inputs */
		err = pg_provenance_add_file(r, p, full.ptr, sha, sha && want && !strcmp(sha, want));
		free(sha);
	}
	pg_buf_release(&full);
	return err;
}

int pg_prov_tool_version(char **out, const char *tool)
{
	pg_spawn_opts so = PG_SPAWN_OPTS_INIT;
	pg_spawn_result res;
	const char *argv[3] = { tool, "--version", NULL };
	pg_buf line = PG_BUF_INIT;
	int err;

	*out = NULL;
	pg_spawn_result_init(&res);
	so.tail_max = 4096;
	so.timeout_ms = 10000;
	if (pg_spawn_run(&res, argv, &so) < 0)
		err = pg_buf_printf(&line, "unavailable: %s", pg_error_last());
	else if (!pg_spawn_succeeded(&res) || !res.tail.len)
		err = pg_buf_printf(&line, "unavailable: %s --version failed", tool);
	else
		err = pg_buf_put(&line, res.tail.ptr, strcspn(res.tail.ptr, "\n"));
	pg_error_clear();
	pg_spawn_result_release(&res);
	if (err == 0 && !(*out = pg_buf_detach(&line)))
		err = PG_ENOMEM;
	pg_buf_release(&line);
	return err;
}
