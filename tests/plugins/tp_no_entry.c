/* tests/plugins/tp_no_entry.c - a shared object without the entry symbol. */
int tp_no_entry_something(void);
int tp_no_entry_something(void)
{
    return 42;
}
