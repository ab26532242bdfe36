/* Test helper for runs under LD_PRELOAD and for the unprivileged run: allocates a few blocks
 * through the ordinary malloc (whichever is preloaded) and prints "ok" and the colours the
 * library reports for them, so a test can tell a coloured run from an uncoloured one. */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(void) {
    int (*colour_of)(const void *) = (int (*)(const void *))dlsym(RTLD_DEFAULT, "memtint_color_of");
    size_t sizes[] = {24, 700, 5000, 20000};
    for (int i = 0; i < 4; i++) {
        char *p = malloc(sizes[i]);
        if (!p) { perror("malloc"); return 1; }
        memset(p, 7, sizes[i]);
        printf("size=%zu colour=%d\n", sizes[i], colour_of ? colour_of(p) : -2);
    }
    printf("ok\n");
    return 0;
}
