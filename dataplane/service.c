// SPDX-License-Identifier: BSD-3-Clause
/*
 * Running as a system service (nftdp.service, docs/appliance.md): the
 * sd_notify protocol without libsystemd (one datagram to the unix socket
 * $NOTIFY_SOCKET names, an abstract one when it starts with '@'), and the
 * file a reload (SIGHUP) loads: `flush ruleset` and then the ruleset file
 * by `include`, so that nft sends both in one batch, one transaction that
 * commits whole or not at all, as the kernel's `nft -f` of such a file.
 */
#include <errno.h>
#include <limits.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "dataplane_priv.h"

int nftdp_dp_sd_notify(const char *state)
{
	const char *path = getenv("NOTIFY_SOCKET");
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	size_t n;
	int fd, ret = 0;

	if (!path || !path[0])
		return 0; /* not started by systemd (Type=notify) */
	n = strlen(path);
	if (n >= sizeof(sa.sun_path) || (path[0] != '/' && path[0] != '@'))
		return -EINVAL;
	memcpy(sa.sun_path, path, n);
	if (path[0] == '@')
		sa.sun_path[0] = '\0';
	fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	if (sendto(fd, state, strlen(state), MSG_NOSIGNAL, (struct sockaddr *)&sa,
		   (socklen_t)(offsetof(struct sockaddr_un, sun_path) + n)) < 0)
		ret = -errno;
	close(fd);
	return ret;
}

int nftdp_dp_reload_file(const char *ruleset, char *path, size_t size)
{
	char abs[PATH_MAX];
	const char *dir = getenv("RUNTIME_DIRECTORY"); /* systemd's, else /tmp */
	FILE *f;
	int fd;

	/* nft resolves a relative include against its include path */
	if (!realpath(ruleset, abs))
		return -errno;
	if (strchr(abs, '"'))
		return -EINVAL;
	if (snprintf(path, size, "%s/nftdp-reload-XXXXXX", dir && dir[0] ? dir : "/tmp") >=
	    (int)size)
		return -ENAMETOOLONG;
	fd = mkstemp(path);
	if (fd < 0)
		return -errno;
	f = fdopen(fd, "w");
	if (!f) {
		close(fd);
		unlink(path);
		return -ENOMEM;
	}
	fprintf(f, "flush ruleset\ninclude \"%s\"\n", abs);
	if (fclose(f) != 0) {
		unlink(path);
		return -EIO;
	}
	return 0;
}
