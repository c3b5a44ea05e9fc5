/* init.c - the static aarch64 /init of the KUnit boot: mount, print the marker, power off. */
/*
 * Built-in KUnit suites have all run before the kernel starts /init, so
 * by the time this runs the KTAP output is complete.  The marker goes to
 * /dev/kmsg as well as to the console, so that it carries a kernel
 * timestamp: pullgate's KTAP parser takes the boot time from it.
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

int main(void)
{
	mount_one("devtmpfs", "/dev", "devtmpfs");
	ensure_console();
	mount_one("proc", "/proc", "proc");
	mount_one("sysfs", "/sys", "sysfs");

	print_uptime();
	printf("%s\n", MARKER);
	fflush(stdout);
	kmsg(MARKER);

	sync();
	reboot(RB_POWER_OFF);
	/* only reached when power-off failed; the boot timeout ends QEMU */
	dprintf(2, "pullgate-init: power off failed: %s\n", strerror(errno));
	for (;;)
		pause();
}
