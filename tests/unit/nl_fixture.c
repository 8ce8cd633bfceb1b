/* nl_fixture.c: fixture files and snapshot lookups (see nl_fixture.h). */
#include "nl_fixture.h"

#include "nl_test.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

char *nl_test_read_fixture(const char *name, size_t *len) {
  char path[1024];
  snprintf(path, sizeof(path), "%s/%s", nl_test_fixture_dir, name);
  FILE *f = fopen(path, "rb");
  if (f == NULL) {
    fprintf(stderr, "  missing fixture %s\n", path);
    return NULL;
  }
  fseek(f, 0, SEEK_END);
  long n = ftell(f);
  fseek(f, 0, SEEK_SET);
  char *buf = malloc((size_t)n + 1);
  if (buf != NULL && fread(buf, 1, (size_t)n, f) != (size_t)n) {
    free(buf);
    buf = NULL;
  }
  fclose(f);
  if (buf != NULL) {
    buf[n] = '\0';
    *len = (size_t)n;
  }
  return buf;
}

const nl_stream_snap *nl_test_stream(const nl_snapshot_set *set,
                                     const char *name) {
  for (size_t i = 0; i < set->n_streams; i++)
    if (strcmp(set->streams[i].name, name) == 0)
      return &set->streams[i];
  return NULL;
}

const nl_consumer_snap *nl_test_consumer(const nl_snapshot_set *set,
                                         const char *name) {
  for (size_t i = 0; i < set->n_consumers; i++)
    if (strcmp(set->consumers[i].name, name) == 0)
      return &set->consumers[i];
  return NULL;
}
