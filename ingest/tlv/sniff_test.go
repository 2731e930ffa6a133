package tlv

import "testing"

// TestSniffRawTOPPERS: raw ASP and FMP logs are told by their lines (all
// of the first ones of the format, one of them a message only the TOPPERS
// kernel prints); other "[number] text" logs and the standard format are
// not taken for them, nor they for one another.
func TestSniffRawTOPPERS(t *testing.T) {
	asp := "[1926099] dispatch to task 1.\n[1926446] enter to ena_int intno=2.\n[1926624] leave from ena_int ercd=0.\n[1926926] System logging task is started on port 1.\n"
	fmp := "[0]:[1]: task 1 becomes RUNNABLE.\n[0]:[2]: task 2 becomes RUNNABLE.\n[10]:[1]: dispatch to task 1.\n"
	std := "[100]MAIN_TASK.state=RUNNING\n[110]MAIN_TASK.enterSVC(dly_tsk, 10)\n[120]MAIN_TASK.state=WAITING\n"
	other := "[1] server started\n[2] listening on port 80\n[3] request from 10.0.0.1\n"
	few := "[1926099] dispatch to task 1.\n[1926446] enter to ena_int intno=2.\n"
	cut := asp + "[1927000] ente" // the head's last line cut
	for _, tc := range []struct {
		name string
		head string
		want map[ingKind]bool
	}{
		{"asp", asp, map[ingKind]bool{kindASP: true}},
		{"asp cut", cut, map[ingKind]bool{kindASP: true}},
		{"fmp", fmp, map[ingKind]bool{kindFMP: true}},
		{"standard", std, map[ingKind]bool{kindTLV: true}},
		{"another log", other, map[ingKind]bool{}},
		{"two lines", few, map[ingKind]bool{}},
	} {
		for _, k := range []ingKind{kindTLV, kindASP, kindFMP} {
			if got := (&Ingester{kind: k}).Sniff([]byte(tc.head)); got != tc.want[k] {
				t.Errorf("%s: %s sniffs %v", tc.name, (&Ingester{kind: k}).Format().Name, got)
			}
		}
	}
}
