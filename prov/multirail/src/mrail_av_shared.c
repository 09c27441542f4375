/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Named AVs: the shared table another process on the node reads
 * (core/av_shm.h has its layout and rules). The process that creates a
 * named AV writes it: each entry it inserts is published at its fi_addr_t.
 * A process that opens the AV with FI_READ maps the table read-only and
 * takes an index into its own rails' AVs when it first uses it
 * (mrail_av.c), so an fi_addr_t from the writer names the same peer there.
 */
#include "mrail.h"
#include "mrail_av.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

_Static_assert(MRAIL_AV_SHM_NONE == FI_ADDR_NOTAVAIL,
	       "an unpublished map_addr entry reads FI_ADDR_NOTAVAIL");

struct mrail_av_shared {
	char path[MRAIL_AV_SHM_NAME_MAX + 32];
	void *region;
	size_t len;
	bool writer;
	/* The writer's descriptor of the region, holding the write lock that
	 * says it is written (shared_lock); -1 for a reader. */
	int lock_fd;
};

/*
 * Takes the lock that makes this open of the region its writer: an open
 * file description lock on the whole object, which the kernel drops when
 * the writer closes it or dies. A process id stored in the region could
 * not say that: in another PID namespace (a container) it names another
 * process, or none. Returns 0, or -FI_EBUSY while another open holds it
 * (another process, or this one through another fi_av_open).
 */
static int shared_lock(int fd)
{
	struct flock lock = { .l_type = F_WRLCK, .l_whence = SEEK_SET };

	if (!fcntl(fd, F_OFD_SETLK, &lock))
		return 0;
	return errno == EAGAIN || errno == EACCES ? -FI_EBUSY : -errno;
}

static int shared_map(struct mrail_av_shared *shared, int fd, bool writable)
{
	struct stat st;

	if (fstat(fd, &st))
		return -errno;
	shared->len = (size_t) st.st_size;
	if (!shared->len)
		return -FI_EAGAIN;	/* created, not sized yet */
	shared->region = mmap(NULL, shared->len,
			      writable ? PROT_READ | PROT_WRITE : PROT_READ,
			      MAP_SHARED, fd, 0);
	if (shared->region == MAP_FAILED) {
		shared->region = NULL;
		return -errno;
	}
	return 0;
}

static void shared_unmap(struct mrail_av_shared *shared)
{
	if (shared->region)
		munmap(shared->region, shared->len);
	shared->region = NULL;
}

/* FI_READ: the AV must exist, made by a writer of this mrail. */
static int shared_attach(struct mrail_av_shared *shared, const char *name)
{
	char err[MRAIL_ERR_MAX];
	int fd, ret;

	fd = shm_open(shared->path, O_RDONLY, 0);
	if (fd < 0) {
		ret = -errno;
		MRAIL_WARN(FI_LOG_AV, "named AV '%s' (%s): %s; FI_READ opens an "
			   "AV another process created first\n", name,
			   shared->path, strerror(errno));
		return ret == -ENOENT ? -FI_ENOENT : ret;
	}
	ret = shared_map(shared, fd, false);
	close(fd);
	if (ret == -FI_EAGAIN) {
		MRAIL_WARN(FI_LOG_AV, "named AV '%s': its writer has not sized "
			   "it yet; open it once the writer's fi_av_open returned\n",
			   name);
		return ret;
	}
	if (ret) {
		MRAIL_WARN(FI_LOG_AV, "named AV '%s': cannot map %s: %s\n", name,
			   shared->path, strerror(-ret));
		return ret;
	}
	if (mrail_av_shm_check(shared->region, shared->len, err, sizeof(err))) {
		MRAIL_WARN(FI_LOG_AV, "named AV '%s': %s is not one mrail can "
			   "read: %s\n", name, shared->path, err);
		shared_unmap(shared);
		return -FI_EINVAL;
	}
	return 0;
}

/* The writer's process id as the region shows it, or 0 when the region
 * cannot say (not sized or not initialised yet). */
static int shared_writer_pid(struct mrail_av_shared *shared, int fd)
{
	char err[MRAIL_ERR_MAX];
	int pid = 0;

	if (shared_map(shared, fd, false))
		return 0;
	if (!mrail_av_shm_check(shared->region, shared->len, err, sizeof(err)))
		pid = ((const struct mrail_av_shm_hdr *) shared->region)->writer_pid;
	shared_unmap(shared);
	return pid;
}

/* Creates the region, or takes over one whose writer is gone. */
static int shared_create(struct mrail_av_shared *shared, const char *name,
			 size_t count)
{
	uint32_t capacity = mrail_av_shm_capacity(count);
	size_t len = mrail_av_shm_size(capacity);
	bool left_behind = false;
	char who[32];
	int fd, ret, pid;

	fd = shm_open(shared->path, O_RDWR | O_CREAT | O_EXCL, 0600);
	if (fd < 0 && errno == EEXIST) {
		fd = shm_open(shared->path, O_RDWR, 0);
		left_behind = true;
	}
	if (fd < 0) {
		ret = -errno;
		MRAIL_WARN(FI_LOG_AV, "named AV '%s': cannot create %s: %s\n",
			   name, shared->path, strerror(errno));
		return ret;
	}
	ret = shared_lock(fd);
	if (ret == -FI_EBUSY) {
		pid = shared_writer_pid(shared, fd);
		close(fd);
		if (pid)
			snprintf(who, sizeof(who), "process %d", pid);
		MRAIL_WARN(FI_LOG_AV, "named AV '%s' is written by %s: one "
			   "process writes a named AV, the others open it with "
			   "FI_READ\n", name, pid ? who : "another process");
		return ret;
	}
	if (ret) {
		MRAIL_WARN(FI_LOG_AV, "named AV '%s': cannot lock %s: %s\n", name,
			   shared->path, strerror(-ret));
		close(fd);
		return ret;
	}
	/* Locked: whoever wrote a region that was already there is gone. */
	if (left_behind)
		MRAIL_INFO(FI_LOG_AV, "named AV '%s': %s was left by a process "
			   "that is gone; made anew\n", name, shared->path);
	if (ftruncate(fd, (off_t) len)) {
		ret = -errno;
		MRAIL_WARN(FI_LOG_AV, "named AV '%s': cannot size %s to %zu "
			   "bytes: %s\n", name, shared->path, len, strerror(errno));
		goto err_unlink;
	}
	ret = shared_map(shared, fd, true);
	if (ret) {
		MRAIL_WARN(FI_LOG_AV, "named AV '%s': cannot map %s: %s\n", name,
			   shared->path, strerror(-ret));
		goto err_unlink;
	}
	mrail_av_shm_init(shared->region, capacity, (int32_t) getpid());
	shared->writer = true;
	shared->lock_fd = fd;
	return 0;

err_unlink:
	shm_unlink(shared->path);
	close(fd);
	return ret;
}

int mrail_av_shared_open(struct fi_av_attr *attr, struct mrail_av_shared **out)
{
	struct mrail_av_shared *shared;
	char err[MRAIL_ERR_MAX];
	int ret;

	if (mrail_av_shm_check_name(attr->name, err, sizeof(err))) {
		MRAIL_WARN(FI_LOG_AV, "AV name '%s' is not one mrail can share: "
			   "%s\n", attr->name, err);
		return -FI_EINVAL;
	}
	shared = calloc(1, sizeof(*shared));
	if (!shared)
		return -FI_ENOMEM;
	shared->lock_fd = -1;
	/* Per user, so that two users' AVs of one name stay apart. */
	snprintf(shared->path, sizeof(shared->path), "/mrail_av.%u.%s",
		 (unsigned) getuid(), attr->name);
	ret = (attr->flags & FI_READ) ? shared_attach(shared, attr->name) :
		shared_create(shared, attr->name, attr->count);
	if (ret) {
		free(shared);
		return ret;
	}
	/* fi_av(3): with a name and map_addr 0, the provider returns the one
	 * it uses. Ours is the array of published fi_addr_t values. */
	if (!attr->map_addr)
		attr->map_addr = (void *) mrail_av_shm_map(shared->region);
	*out = shared;
	return 0;
}

void mrail_av_shared_close(struct mrail_av_shared *shared)
{
	const struct mrail_av_shm_hdr *hdr;

	if (!shared)
		return;
	hdr = shared->region;
	/* Not a child that inherited the writer's AV: the writer unlinks. */
	if (shared->writer && hdr && hdr->writer_pid == getpid())
		shm_unlink(shared->path);
	shared_unmap(shared);
	/* After the unlink: a new writer of the name makes a region anew. */
	if (shared->lock_fd >= 0)
		close(shared->lock_fd);
	free(shared);
}

bool mrail_av_shared_is_reader(const struct mrail_av_shared *shared)
{
	return shared && !shared->writer;
}

uint64_t mrail_av_shared_capacity(const struct mrail_av_shared *shared)
{
	return shared ? mrail_av_shm_capacity_of(shared->region) : 0;
}

void mrail_av_shared_publish(struct mrail_av_shared *shared, fi_addr_t fi_addr,
			     const struct mrail_addr *addr)
{
	uint8_t buf[MRAIL_ADDR_MAX_LEN];
	ssize_t len;

	if (!shared || !shared->writer)
		return;
	if (fi_addr >= mrail_av_shm_capacity_of(shared->region)) {
		MRAIL_WARN(FI_LOG_AV, "named AV: entry %" PRIu64 " is past the "
			   "%u the AV shares (fi_av_attr.count): other processes "
			   "will not see it\n", (uint64_t) fi_addr,
			   mrail_av_shm_capacity_of(shared->region));
		return;
	}
	len = mrail_addr_encode(addr, buf, sizeof(buf));
	if (len <= 0 || mrail_av_shm_publish(shared->region, fi_addr, buf,
					     (size_t) len))
		MRAIL_WARN(FI_LOG_AV, "named AV: cannot share entry %" PRIu64
			   "\n", (uint64_t) fi_addr);
}

void mrail_av_shared_withdraw(struct mrail_av_shared *shared, fi_addr_t fi_addr)
{
	if (shared && shared->writer)
		mrail_av_shm_withdraw(shared->region, fi_addr);
}

int mrail_av_shared_read(const struct mrail_av_shared *shared, fi_addr_t fi_addr,
			 struct mrail_addr *addr)
{
	uint8_t buf[MRAIL_ADDR_MAX_LEN];
	char err[MRAIL_ERR_MAX];
	size_t len;
	int state;

	state = mrail_av_shm_read(shared->region, fi_addr, buf, &len);
	if (state == MRAIL_AV_SHM_EMPTY || state == MRAIL_AV_SHM_REMOVED)
		return 0;
	if (state < 0 || mrail_addr_decode(buf, len, addr, err, sizeof(err))) {
		MRAIL_WARN(FI_LOG_AV, "named AV %s: entry %" PRIu64 " is corrupt"
			   "%s%s\n", shared->path, (uint64_t) fi_addr,
			   state < 0 ? "" : ": ", state < 0 ? "" : err);
		return -FI_EINVAL;
	}
	return 1;
}
