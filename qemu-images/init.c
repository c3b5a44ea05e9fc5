/* init.c - the static aarch64 /init of the KUnit boot: mount, print the marker with the run's nonce, power off. */
/*
 * Built-in KUnit suites have all run before the kernel starts /init, so
 * by the time this runs the KTAP output is complete.  The marker goes to
 * /dev/kmsg as well as to the console, so that it carries a kernel
 * timestamp: pullgate's KTAP parser takes the boot time from it.
 *
 * The marker carries the nonce boot.sh put on the kernel command line
 * (pullgate.nonce=N), read back from /proc/cmdline: only this boot's
 * console can show it, so no earlier console passes for this run's.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/reboot.h>
#include <sys/stat.h>
#include <unistd.h>

#define MARKER "pullgate-init: done"
#define NONCE_PARAM "pullgate.nonce="
#define NONCE_MAX 64

static void mount_one(const char *source, const char *target, const char *type)
{
	mkdir(target, 0755);
	if (mount(source, target, type, MS_NOSUID | MS_NOEXEC, NULL) < 0 && errno != EBUSY)
		dprintf(2, "pullgate-init: mount %s on %s: %s\n", type, target, strerror(errno));
}

/* The kernel hands /init the console when the initramfs has /dev/console. */
static void ensure_console(void)
{
	int fd;

	if (fcntl(1, F_GETFD) >= 0)
		return;
	fd = open("/dev/console", O_RDWR | O_NOCTTY);
	if (fd < 0)
		return;
	dup2(fd, 0);
	dup2(fd, 1);
	dup2(fd, 2);
	if (fd > 2)
		close(fd);
}

static void kmsg(const char *line)
{
	int fd = open("/dev/kmsg", O_WRONLY | O_NOCTTY);

	if (fd < 0)
		return;
	/* <5> is KERN_NOTICE: printed on the console at the default loglevel */
	dprintf(fd, "<5>%s\n", line);
	close(fd);
}

static void print_uptime(void)
{
	char buf[64];
	ssize_t n;
	int fd = open("/proc/uptime", O_RDONLY);

	if (fd < 0)
		return;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return;
	buf[n] = '\0';
	buf[strcspn(buf, " \n")] = '\0';
	printf("pullgate-init: uptime %s s\n", buf);
}

/* The nonce of the kernel command line into out (letters and digits only); "" when none. */
static void read_nonce(char *out, size_t cap)
{
	char line[4096], *p;
	ssize_t n;
	size_t len = 0;
	int fd = open("/proc/cmdline", O_RDONLY);

	out[0] = '\0';
	if (fd < 0)
		return;
	n = read(fd, line, sizeof(line) - 1);
	close(fd);
	if (n <= 0)
		return;
	line[n] = '\0';
	for (p = line; (p = strstr(p, NONCE_PARAM)); p++) {
		if (p != line && p[-1] != ' ')
			continue;
		p += strlen(NONCE_PARAM);
		while (len + 1 < cap && ((p[len] >= '0' && p[len] <= '9') ||
					 (p[len] >= 'a' && p[len] <= 'z') ||
					 (p[len] >= 'A' && p[len] <= 'Z')))
			len++;
		memcpy(out, p, len);
		out[len] = '\0';
		return;
	}
}

int main(void)
{
	char nonce[NONCE_MAX + 1], marker[sizeof(MARKER) + sizeof(" nonce=") + NONCE_MAX];

	mount_one("devtmpfs", "/dev", "devtmpfs");
	ensure_console();
	mount_one("proc", "/proc", "proc");
	mount_one("sysfs", "/sys", "sysfs");

	read_nonce(nonce, sizeof(nonce));
	if (nonce[0])
		snprintf(marker, sizeof(marker), "%s nonce=%s", MARKER, nonce);
	else
		snprintf(marker, sizeof(marker), "%s", MARKER);
	print_uptime();
	printf("%s\n", marker);
	fflush(stdout);
	kmsg(marker);

	sync();
	reboot(RB_POWER_OFF);
	/* only reached when power-off failed; the boot timeout ends QEMU */
	dprintf(2, "pullgate-init: power off failed: %s\n", strerror(errno));
	for (;;)
		pause();
}
