/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* Text input for sim/'s file formats (CDF and workload files): one small file read whole,
 * and a text cut into lines for a sans-I/O line parser. Private to sim/. */
#ifndef SIM_TEXTFILE_H
#define SIM_TEXTFILE_H

#include <stddef.h>

#define SIM_FILE_MAX (1u << 20)   /* 1 MiB: larger is not a file of ours */
#define SIM_LINE_MAX 1024         /* characters a line, newline excluded */

/* The whole of @path, NUL-terminated, in *@text (free it); 0, or a negative errno with
 * "PATH: why" in @err (-EFBIG past SIM_FILE_MAX, or @max bytes for _max). */
int sim_read_file(const char *path, char **text, size_t *len, char *err, size_t errlen);
int sim_read_file_max(const char *path, size_t max, char **text, size_t *len, char *err,
		      size_t errlen);

/* A parser's step for one line (without its '\n'), and for a whole text. */
typedef int (*sim_line_fn)(void *obj, const char *line, size_t len, char *err, size_t errlen);
typedef int (*sim_text_fn)(void *obj, const char *text, size_t len, const char *file,
			   char *err, size_t errlen);

/* Call @fn for each line of @text (a final line without a '\n' counts) until one returns
 * non-zero: that value is returned, else 0. */
int sim_each_line(const char *text, size_t len, sim_line_fn fn, void *obj, char *err,
		  size_t errlen);
/* @parse over the whole of the file @path (sim_read_file), which names it in messages. */
int sim_load_file(const char *path, sim_text_fn parse, void *obj, char *err, size_t errlen);
int sim_load_file_max(const char *path, size_t max, sim_text_fn parse, void *obj, char *err,
		      size_t errlen);

/* Split @line in place into at most @max words separated by blanks, after cutting a '#'
 * comment off; returns the count, or -1 when there are more than @max. */
int sim_words(char *line, char **words, int max);
/* The same on a copy of @line (@len characters, no '\n') in @buf (SIM_LINE_MAX + 1
 * bytes): SIM_LINE_LONG when it is longer than SIM_LINE_MAX. */
#define SIM_LINE_LONG (-2)
int sim_line_words(const char *line, size_t len, char *buf, char **words, int max);

#endif
