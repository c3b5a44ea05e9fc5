/* test_dashboard_report.c - unit tests for the report's sections on the dashboard: the build's farm among its facts. */
#include "tests/unit/unit.h"

#include "server/dashboard.h"

static void provenance(pg_buf *out, const char *json)
{
	pg_json *report = NULL;

	assert_int_equal(pg_json_parse(&report, json, strlen(json)), 0);
	pg_dash_provenance(out, report);
	pg_json_free(report);
}

/* The farm's text is build.sh's, and data: escaped as every other fact. */
static void test_farm_escaped(void **state)
{
	pg_buf out = PG_BUF_INIT;

	(void)state;
	provenance(&out, "{\"provenance\": [{\"stage\": \"build\", \"files\": [], "
		   "\"toolchain\": \"gcc 12\", \"farm_env\": \"061fbd5764d1c3a1c1adf83ba8239f89: "
		   "gcc <12> & 'x'\", \"farm\": \"<script>alert(1)</script> compiled 2 objects\"}, "
		   "{\"stage\": \"boot\", \"files\": [], \"farm_env\": null, \"farm\": null}]}");
	assert_non_null(strstr(out.ptr, "<dt>icecc environment</dt><dd>061fbd5764d1c3a1c1adf83ba8239f89: "
			       "gcc &lt;12&gt; &amp; &#39;x&#39;</dd>"));
	assert_non_null(strstr(out.ptr, "<dt>farm</dt><dd>&lt;script&gt;alert(1)&lt;/script&gt; "
			       "compiled 2 objects</dd></dl></td></tr>\n<tr><th>boot"));
	assert_null(strstr(out.ptr, "<script>"));
	/* the boot, without a farm, has no such facts: one each in the page */
	assert_null(strstr(strstr(out.ptr, "<dt>farm</dt>") + 1, "<dt>farm</dt>"));
	assert_null(strstr(strstr(out.ptr, "<dt>icecc environment</dt>") + 1,
			   "<dt>icecc environment</dt>"));
	pg_buf_release(&out);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_farm_escaped),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
