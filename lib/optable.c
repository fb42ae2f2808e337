#include <string.h>

#include "qpace/optable.h"

void qp_optable_build(const struct qp_optdoc *docs, size_t n, struct option *longopts,
		      char *shortopts)
{
	memset(longopts, 0, (n + 1) * sizeof(*longopts));
	for (size_t i = 0; i < n; i++) {
		longopts[i] = (struct option){ docs[i].name,
					       docs[i].arg ? required_argument : no_argument,
					       NULL, docs[i].key };
		*shortopts++ = docs[i].key;
		if (docs[i].arg)
			*shortopts++ = ':';
	}
	*shortopts = 0;
}

void qp_optable_usage(FILE *f, const struct qp_optdoc *docs, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		char left[48];

		snprintf(left, sizeof(left), "-%c, --%s%s%s", docs[i].key, docs[i].name,
			 docs[i].arg ? " " : "", docs[i].arg ? docs[i].arg : "");
		fprintf(f, "  %-26s %s\n", left, docs[i].help);
	}
}
