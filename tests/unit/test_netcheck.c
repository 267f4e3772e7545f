/* test_netcheck.c -- unit tests of the sandbox network's verdict against
 * the egress rule's record (sandbox/netcheck.h: netcheck_judge), one case
 * per way a network can differ from what the rule covers. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "sandbox/netcheck.h"

#define ID  "7002e8577e07fc1d2eda590d34b510d5b25a5e514a0ebf2433e2972247fe9714"
#define ID2 "1111111111111111111111111111111111111111111111111111111111111111"

static const char rec[] = "# talkback egress rule\nnetwork tbnet\nid " ID "\n"
                          "subnet 172.18.0.0/16\nsubnet 172.19.0.0/16\nchain X\ninstalled t\n";

/* Docker's inspect of the network, as JSON text with fields replaced. */
static json_t *inspect(const char *id, const char *driver, const char *icc, const char *ipv6,
                       const char *subnets)
{
    char b[2048];
    snprintf(b, sizeof b,
             "{\"Name\":\"tbnet\",\"Id\":\"%s\",\"Driver\":\"%s\",\"EnableIPv6\":%s,"
             "\"IPAM\":{\"Config\":[%s]},\"Options\":{%s}}",
             id, driver, ipv6, subnets, icc);
    json_t *j = json_loads(b, 0, NULL);
    assert_non_null(j);
    return j;
}

#define ICC_OFF "\"com.docker.network.bridge.enable_icc\":\"false\""
#define ONE     "{\"Subnet\":\"172.18.0.0/16\",\"Gateway\":\"172.18.0.1\"}"

static netcheck_why_t judge(json_t *j, const char *record)
{
    char detail[512];
    netcheck_why_t w = netcheck_judge("tbnet", j, record, strlen(record), detail, sizeof detail);
    assert_true(w == NC_OK ? detail[0] == '\0' : detail[0] != '\0');
    json_decref(j);
    return w;
}

static void test_judge(void **state)
{
    (void)state;
    assert_int_equal(judge(inspect(ID, "bridge", ICC_OFF, "false", ONE), rec), NC_OK);
    assert_int_equal(
        judge(inspect(ID, "bridge", ICC_OFF, "false", ONE ",{\"Subnet\":\"172.19.0.0/16\"}"), rec),
        NC_OK);
    /* Re-made by hand: another id (and with Docker's defaults). */
    assert_int_equal(judge(inspect(ID2, "bridge", "", "false", ONE), rec), NC_OTHER_ID);
    assert_int_equal(judge(inspect(ID, "bridge", "", "false", ONE), rec), NC_ICC);
    assert_int_equal(
        judge(inspect(ID, "bridge", "\"com.docker.network.bridge.enable_icc\":\"true\"", "false",
                      ONE),
              rec),
        NC_ICC);
    assert_int_equal(judge(inspect(ID, "macvlan", ICC_OFF, "false", ONE), rec), NC_DRIVER);
    assert_int_equal(judge(inspect(ID, "bridge", ICC_OFF, "true", ONE), rec), NC_IPV6);
    assert_int_equal(
        judge(inspect(ID, "bridge", ICC_OFF, "false", ONE ",{\"Subnet\":\"fd00::/64\"}"), rec),
        NC_IPV6);
    assert_int_equal(
        judge(inspect(ID, "bridge", ICC_OFF, "false", "{\"Subnet\":\"10.5.0.0/16\"}"), rec),
        NC_SUBNET);
    assert_int_equal(judge(inspect(ID, "bridge", ICC_OFF, "false", ""), rec), NC_SUBNET);
    assert_int_equal(judge(NULL, rec), NC_MISSING);
    /* Records that are not one. */
    assert_int_equal(judge(inspect(ID, "bridge", ICC_OFF, "false", ONE), ""), NC_BAD_RECORD);
    assert_int_equal(judge(inspect(ID, "bridge", ICC_OFF, "false", ONE), "network tbnet\nid x\n"),
                     NC_BAD_RECORD);
    assert_int_equal(judge(inspect(ID, "bridge", ICC_OFF, "false", ONE),
                           "network other\nid " ID "\nsubnet 172.18.0.0/16\n"),
                     NC_BAD_RECORD);
    char nul[sizeof rec];
    memcpy(nul, rec, sizeof rec);
    nul[3] = '\0';
    char detail[512];
    json_t *j = inspect(ID, "bridge", ICC_OFF, "false", ONE);
    assert_int_equal(netcheck_judge("tbnet", j, nul, sizeof rec - 1, detail, sizeof detail),
                     NC_BAD_RECORD);
    json_decref(j);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_judge),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
