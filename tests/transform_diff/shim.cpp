// A driver for HTCondor 24.0.24's transform code in the Python wheel's
// libcondor_utils: applies one rules file to ads (one new-syntax ad a line)
// the way condor_transform_ads's ApplyTransforms does, printing each result
// in long form (hash order; sort it) with a blank line after each.
#include <string>
#include <cstdio>
#include <cstring>
#include <cstdlib>
#include <vector>
#include <strings.h>
#include <cctype>

struct MacroSource { bool is_inside; bool is_command; short id; int line; short meta_id; short meta_off; };

void xfs_ctor(void*, const char*) asm("_ZN22MacroStreamXFormSourceC1EPKc");
int xfs_load(void*, FILE*, MacroSource&, std::string&) asm("_ZN22MacroStreamXFormSource4loadEP8_IO_FILER12macro_sourceRNSt7__cxx1112basic_stringIcSt11char_traitsIcESaIcEEE");
bool xfs_matches(void*, void*) asm("_ZN22MacroStreamXFormSource7matchesEPN7classad7ClassAdE");
int xfs_init_iter(void*, void*, std::string&) asm("_ZN22MacroStreamXFormSource13init_iteratorER9XFormHashRNSt7__cxx1112basic_stringIcSt11char_traitsIcESaIcEEE");
bool xfs_first(void*, void*) asm("_ZN22MacroStreamXFormSource15first_iterationER9XFormHash");
bool xfs_next(void*, void*) asm("_ZN22MacroStreamXFormSource14next_iterationER9XFormHash");
void xfs_clear_iter(void*, void*) asm("_ZN22MacroStreamXFormSource15clear_iterationER9XFormHash");
void xh_ctor(void*, int) asm("_ZN9XFormHashC1ENS_6FlavorE");
void xh_init(void*) asm("_ZN9XFormHash4initEv");
void xh_set_flavor(void*, int) asm("_ZN9XFormHash10set_flavorENS_6FlavorE");
void xh_set_rules(void*, const char*, MacroSource&) asm("_ZN9XFormHash13set_RulesFileEPKcR12macro_source");
void* xh_save(void*) asm("_ZN9XFormHash10save_stateEv");
bool xh_rewind(void*, void*, bool) asm("_ZN9XFormHash15rewind_to_stateEP24macro_set_checkpoint_hdrb");
int transform_ad(void*, void*, void*, std::string&, unsigned) asm("_Z16TransformClassAdPN7classad7ClassAdER22MacroStreamXFormSourceR9XFormHashRNSt7__cxx1112basic_stringIcSt11char_traitsIcESaIcEEEj");
void parser_ctor(void*) asm("_ZN7classad13ClassAdParserC1Ev");
void* parse_ad(void*, const char*, bool) asm("_ZN7classad13ClassAdParser12ParseClassAdEPKcb");
void sprint_ad(std::string&, const void*, const void*, const void*) asm("_Z8sPrintAdRNSt7__cxx1112basic_stringIcSt11char_traitsIcESaIcEEERKN7classad7ClassAdEPK8flat_setIS4_NS6_12CaseIgnLTStrEESE_");
void condor_config() asm("_Z6configv");
void* ad_copy(void*) asm("_ZNK7classad7ClassAd4CopyEv");
int load_route(void*, const std::string&, int&, const void*, int) asm("_Z34XFormLoadFromClassadJobRouterRouteR22MacroStreamXFormSourceRKNSt7__cxx1112basic_stringIcSt11char_traitsIcESaIcEEERiRKN7classad7ClassAdEi");
const char* formatted_text(void*, std::string&, const char*, bool) asm("_ZN22MacroStreamXFormSource16getFormattedTextERNSt7__cxx1112basic_stringIcSt11char_traitsIcESaIcEEEPKcb");

alignas(64) static char xfs[1 << 16];
alignas(64) static char xh[1 << 16];
alignas(64) static char parser[1 << 16];

static void print(void* ad) {
    std::string out;
    sprint_ad(out, ad, nullptr, nullptr);
    if (!out.empty()) { fputs(out.c_str(), stdout); fputs("\n", stdout); }
}

// is_xform_statement(line, "transform") + is_non_trivial_iterate.
static bool iterating(const char* path) {
    FILE* f = fopen(path, "r");
    if (!f) return false;
    char line[4096];
    bool it = false;
    while (fgets(line, sizeof line, f)) {
        const char* p = line;
        while (*p == ' ' || *p == '\t') ++p;
        if (strncasecmp(p, "transform", 9) != 0 || !isspace((unsigned char)p[9])) continue;
        p += 9;
        while (*p && isspace((unsigned char)*p)) ++p;
        if (*p == '=' || *p == ':' || !*p) continue;
        char* end = nullptr;
        long n = strtol(p, &end, 10);
        if (n != 0 && n != 1) { it = true; break; }
        while (end && *end && isspace((unsigned char)*end)) ++end;
        if (end && *end) { it = true; break; }
    }
    fclose(f);
    return it;
}

// -convert ROUTES: the first line of ROUTES is the JOB_ROUTER_DEFAULTS ad,
// the rest JOB_ROUTER_ENTRIES; prints what condor_transform_ads
// -convertoldroutes prints for them (ConvertJobRouterRoutes, options 1).
static int convert(const char* path) {
    FILE* f = fopen(path, "r");
    if (!f) { perror(path); return 1; }
    std::string defaults, entries;
    char line[1 << 16];
    bool first = true;
    while (fgets(line, sizeof line, f)) {
        if (first) { defaults = line; first = false; } else { entries += line; }
    }
    fclose(f);
    // A configuration value has no trailing white space.
    while (!entries.empty() && isspace((unsigned char)entries.back())) entries.pop_back();
    parser_ctor(parser);
    void* base = parse_ad(parser, defaults.c_str(), true);
    if (!base) { fprintf(stderr, "bad defaults ad\n"); return 1; }
    int offset = 0, index = 1;
    while (offset < (int)entries.size()) {
        static char x[1 << 16];
        memset(x, 0, sizeof x);
        xfs_ctor(x, nullptr);
        if (load_route(x, entries, offset, base, 1) >= 0) {
            std::string text;
            printf("\n##### JOB_ROUTER_ENTRIES [%d] #####\n", index);
            fputs(formatted_text(x, text, "", true), stdout);
            printf("\n");
            ++index;
        } else {
            break;
        }
    }
    return 0;
}

int main(int argc, char** argv) {
    if (argc == 3 && strcmp(argv[1], "-convert") == 0) { condor_config(); return convert(argv[2]); }
    if (argc != 3) { fprintf(stderr, "usage: shim RULES ADS | shim -convert ROUTES\n"); return 2; }
    condor_config();
    MacroSource src = {false, false, 0, 0, -1, -2};
    // condor_transform_ads starts with a Basic (1) macro table, names the
    // rules file, loads it, and then promotes the table to Iterating (0)
    // for rules whose TRANSFORM asks for more than one pass (set_flavor,
    // which clears the table again, so $(RulesFile) is empty there).
    xh_ctor(xh, 1);
    xh_init(xh);
    xfs_ctor(xfs, argv[1]);
    FILE* f = fopen(argv[1], "r");
    if (!f) { perror(argv[1]); return 1; }
    xh_set_rules(xh, argv[1], src);
    std::string err;
    if (xfs_load(xfs, f, src, err) < 0) { fprintf(stderr, "load: %s\n", err.c_str()); return 1; }
    if (iterating(argv[1])) xh_set_flavor(xh, 0);
    parser_ctor(parser);
    FILE* in = fopen(argv[2], "r");
    if (!in) { perror(argv[2]); return 1; }
    char line[1 << 16];
    void* checkpoint = xh_save(xh);
    int iter = xfs_init_iter(xfs, xh, err);
    if (iter < 0) { fprintf(stderr, "ERROR: %s\n", err.c_str()); return 1; }
    while (fgets(line, sizeof line, in)) {
        if (line[0] != '[') continue;
        void* ad = parse_ad(parser, line, true);
        if (!ad) { fprintf(stderr, "bad ad: %s", line); return 1; }
        bool will = iter != 0 && xfs_first(xfs, xh);
        if (will) {
            bool going = true;
            while (going) {
                void* a = ad_copy(ad);
                if (xfs_matches(xfs, a)) {
                    if (transform_ad(a, xfs, xh, err, 1) < 0) { fprintf(stderr, "transform failed: %s\n", err.c_str()); return 1; }
                }
                print(a);
                going = xfs_next(xfs, xh);
            }
            xfs_clear_iter(xfs, xh);
        } else {
            if (xfs_matches(xfs, ad)) {
                if (transform_ad(ad, xfs, xh, err, 1) < 0) { fprintf(stderr, "transform failed: %s\n", err.c_str()); return 1; }
            }
            print(ad);
        }
        xh_rewind(xh, checkpoint, false);
    }
    return 0;
}
