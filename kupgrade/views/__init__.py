"""What people see of a cluster: oc/kubectl table printers, the `oc adm upgrade` text
and `upgrade status`, rehearsal reports and the live web view."""
