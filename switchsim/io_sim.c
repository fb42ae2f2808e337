/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* The sim port backend (io.h): frames go to the virtual-time driver, not a socket. */
#include "io.h"

static int sim_open(struct sw_io *io, const struct sw_port_conf *c, const char *shm_path,
			 char *err, size_t len)
{
	(void)io, (void)c, (void)shm_path, (void)err, (void)len;
	return 0;
}

static int sim_recv(struct sw_io *io, struct sw_rx_frame *rx, uint64_t *skipped)
{
	(void)io, (void)rx, (void)skipped;
	return 0;
}

/* Every frame is taken: the driver copies what it keeps (the port reuses its store). */
static int sim_send(struct sw_io *io, const struct iovec *frames, unsigned n)
{
	if (!io->sim_tx)
		return 0;    /* no driver attached: counted as tx errors */
	for (unsigned i = 0; i < n; i++)
		io->sim_tx(io->sim_arg, frames[i].iov_base, frames[i].iov_len, io->sim_leave[i]);
	return (int)n;
}

const struct sw_io_ops sw_io_sim_ops = {
	.name = "sim",
	.open = sim_open,
	.recv = sim_recv,
	.send = sim_send,
};
