/* replay.c - placeholder */
int tl_engines_placeholder(void);
int tl_engines_placeholder(void) { return 0; }
