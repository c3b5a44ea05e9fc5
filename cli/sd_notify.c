/* sd_notify.c - tell systemd how serve is doing over $NOTIFY_SOCKET (the sd_notify(3) datagram protocol). */
#include "cli/cli.h"

#include <stddef.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

int cli_sd_notify(const char *state)
{
	const char *path = getenv("NOTIFY_SOCKET");
	struct sockaddr_un sa;
	size_t n;
	socklen_t len;
	int fd, rc;

	/* a path, or "@name" in the abstract namespace; nothing else is ours to write to */
	if (!path || (path[0] != '/' && path[0] != '@') || (n = strlen(path)) < 2 ||
	    n >= sizeof(sa.sun_path))
		return 0;
	memset(&sa, 0, sizeof(sa));
	sa.sun_family = AF_UNIX;
	memcpy(sa.sun_path, path, n);
	if (path[0] == '@')
		sa.sun_path[0] = '\0';
	len = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + n + (path[0] == '/'));
	if ((fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0)) < 0)
		return -1;
	rc = sendto(fd, state, strlen(state), MSG_NOSIGNAL, (struct sockaddr *)&sa, len) < 0 ? -1 : 1;
	close(fd);
	return rc;
}
