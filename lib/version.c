/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* The release (qpace/version.h): the Makefile defines QPACE_VERSION from VERSION. */
#include "qpace/version.h"

#ifndef QPACE_VERSION
#error "QPACE_VERSION is defined by the Makefile (from the VERSION file)"
#endif

const char *qp_version(void)
{
	return QPACE_VERSION;
}
