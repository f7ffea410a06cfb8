// SPDX-License-Identifier: BSD-3-Clause
/*
 * dataplane/service.c: the sd_notify datagram (to a path and to an
 * abstract socket, none without $NOTIFY_SOCKET) and the reload file
 * (`flush ruleset` and an include of the ruleset's absolute path).
 */
#include <errno.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cmocka.h> /* after the headers it needs */

#include "dataplane_priv.h"

static int bound(struct sockaddr_un *sa, socklen_t len)
{
	int fd = socket(AF_UNIX, SOCK_DGRAM, 0);

	assert_true(fd >= 0);
	assert_int_equal(bind(fd, (struct sockaddr *)sa, len), 0);
	return fd;
}

static void test_notify(void **state)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	char path[64], buf[64];
	ssize_t n;
	int fd;

	(void)state;
	unsetenv("NOTIFY_SOCKET");
	assert_int_equal(nftdp_dp_sd_notify("READY=1"), 0); /* not under systemd */
	snprintf(path, sizeof(path), "/tmp/nftdp-test-notify-%d", (int)getpid());
	unlink(path);
	strcpy(sa.sun_path, path);
	fd = bound(&sa, sizeof(sa));
	setenv("NOTIFY_SOCKET", path, 1);
	assert_int_equal(nftdp_dp_sd_notify("READY=1"), 0);
	n = recv(fd, buf, sizeof(buf), MSG_DONTWAIT);
	assert_int_equal(n, 7);
	assert_memory_equal(buf, "READY=1", 7);
	close(fd);
	unlink(path);
	/* abstract: '@' stands for the leading NUL */
	snprintf(path, sizeof(path), "@nftdp-test-notify-%d", (int)getpid());
	memset(sa.sun_path, 0, sizeof(sa.sun_path));
	memcpy(sa.sun_path + 1, path + 1, strlen(path) - 1);
	fd = bound(&sa, (socklen_t)(offsetof(struct sockaddr_un, sun_path) + strlen(path)));
	setenv("NOTIFY_SOCKET", path, 1);
	assert_int_equal(nftdp_dp_sd_notify("RELOADING=1"), 0);
	n = recv(fd, buf, sizeof(buf), MSG_DONTWAIT);
	assert_int_equal(n, 11);
	assert_memory_equal(buf, "RELOADING=1", 11);
	close(fd);
	setenv("NOTIFY_SOCKET", "relative", 1);
	assert_int_equal(nftdp_dp_sd_notify("READY=1"), -EINVAL);
	unsetenv("NOTIFY_SOCKET");
}

static void test_reload_file(void **state)
{
	char rules[64], tmp[PATH_MAX], text[PATH_MAX + 64], want[PATH_MAX + 64];
	FILE *f;
	size_t n;

	(void)state;
	unsetenv("RUNTIME_DIRECTORY");
	assert_int_equal(nftdp_dp_reload_file("/nonexistent/nftables.conf", tmp, sizeof(tmp)),
			 -ENOENT);
	snprintf(rules, sizeof(rules), "/tmp/nftdp-test-rules-%d.nft", (int)getpid());
	f = fopen(rules, "w");
	assert_non_null(f);
	fclose(f);
	assert_int_equal(nftdp_dp_reload_file(rules, tmp, sizeof(tmp)), 0);
	assert_int_equal(strncmp(tmp, "/tmp/nftdp-reload-", 18), 0);
	f = fopen(tmp, "r");
	assert_non_null(f);
	n = fread(text, 1, sizeof(text) - 1, f);
	text[n] = 0;
	fclose(f);
	snprintf(want, sizeof(want), "flush ruleset\ninclude \"%s\"\n", rules);
	assert_string_equal(text, want);
	unlink(tmp);
	/* systemd's RuntimeDirectory= is used when set */
	setenv("RUNTIME_DIRECTORY", "/tmp", 1);
	assert_int_equal(nftdp_dp_reload_file(rules, tmp, 10), -ENAMETOOLONG);
	unsetenv("RUNTIME_DIRECTORY");
	unlink(rules);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_notify),
	    cmocka_unit_test(test_reload_file),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
