package shell

// gnuTable lists GNU coreutils, grep, sed and file options, one program a
// line: name, short options without an argument, short options with one,
// short options with an optional attached argument, and long options
// (`name=` takes an argument, `name?` an optional one after `=`). It was
// taken from each program's --help on Debian 12 (coreutils 9.1, grep 3.8,
// sed 4.9, file 5.44) with testdata/optgen.py, then checked by hand (sort
// --check[=X] and du --time[=X] take an optional value, file --parameter a
// required one, which --help does not show).
const gnuTable = `
sort	CMRVbcdfghimnrsuz	STkot		batch-size= buffer-size= check? compress-program= debug dictionary-order field-separator= files0-from= general-numeric-sort help human-numeric-sort ignore-case ignore-leading-blanks ignore-nonprinting key= merge month-sort numeric-sort output= parallel= random-sort random-source= reverse sort= stable temporary-directory= unique version version-sort zero-terminated
ls	1ABCDFGHLNQRSUXZabcdfghiklmnopqrstuvx	ITw		all almost-all author block-size= classify? color? context dereference dereference-command-line dereference-command-line-symlink-to-dir directory dired escape file-type format= full-time group-directories-first help hide= hide-control-chars human-readable hyperlink? ignore= ignore-backups indicator-style= inode kibibytes literal no-group numeric-uid-gid quote-name quoting-style= recursive reverse show-control-chars si size sort= tabsize= time= time-style= version width= zero
head	qvz	cn		bytes= help lines= quiet silent verbose version zero-terminated
tail	Ffqvz	cns		bytes= follow? help lines= max-unchanged-stats= pid= quiet retry silent sleep-interval= verbose version zero-terminated
wc	Lclmw			bytes chars files0-from= help lines max-line-length version words
cat	AETbenstuv			help number number-nonblank show-all show-ends show-nonprinting show-tabs squeeze-blank version
cut	Mnsz	bcdf		bytes= characters= complement delimiter= fields= help only-delimited output-delimiter= version zero-terminated
tr	Ccdst			complement delete help squeeze-repeats truncate-set1 version
du	0DHLPSabchklmsx	BXdt		all apparent-size block-size= bytes count-links dereference dereference-args exclude-from= exclude= files0-from= help human-readable inodes max-depth= no-dereference null one-file-system separate-dirs si summarize threshold= time-style= time? total version
df	HPTahiklv	Btx		all block-size= exclude-type= help human-readable inodes local no-sync output? portability print-type si sync total type= version
stat	Lft	c		cached= dereference file-system format= help printf= terse version
date	Ru	dfrs	I	date= debug file= help iso-8601? reference= resolution rfc-3339= rfc-email set= universal utc version
diff	BENTZabcdeilnpqrstuvwy	CDFISUWXx		GTYPE-group-format= LTYPE-line-format= brief color? context? ed exclude= exclude-from= expand-tabs from-file= help horizon-lines= ifdef= ignore-all-space ignore-blank-lines ignore-case ignore-file-name-case ignore-matching-lines= ignore-space-change ignore-tab-expansion ignore-trailing-space initial-tab label= left-column line-format= minimal new-file no-dereference no-ignore-file-name-case normal paginate palette= rcs recursive report-identical-files show-c-function show-function-line= side-by-side speed-large-files starting-file= strip-trailing-cr suppress-blank-empty suppress-common-lines tabsize= text to-file= unidirectional-new-file unified? version width=
cmp	blsv	in		bytes= help ignore-initial= print-bytes quiet silent verbose version
grep	EFGHILPRTUVZabchilnoqrsvwxz	ABCDdefm		after-context= basic-regexp before-context= binary binary-files= byte-offset color? colour? context= count dereference-recursive devices= directories= exclude= exclude-dir= exclude-from= extended-regexp file= files-with-matches files-without-match fixed-strings group-separator= help ignore-case include= initial-tab invert-match label= line-buffered line-number line-regexp max-count= no-filename no-group-separator no-ignore-case no-messages null null-data only-matching perl-regexp quiet recursive regexp= silent text version with-filename word-regexp
sed	Enrsuz	efl	i	debug expression= file= follow-symlinks help in-place? line-length= null-data posix quiet regexp-extended sandbox separate silent unbuffered version zero-terminated
uniq	Dcdiuz	fsw		all-repeated? check-chars= count group? help ignore-case repeated skip-chars= skip-fields= unique version zero-terminated
nl	p	bdfhilnsvw		body-numbering= footer-numbering= header-numbering= help join-blank-lines= line-increment= no-renumber number-format= number-separator= number-width= section-delimiter= starting-line-number= version
md5sum	bctwz			binary check help ignore-missing quiet status strict tag text version warn zero
sha256sum	bctwz			binary check help ignore-missing quiet status strict tag text version warn zero
sha1sum	bctwz			binary check help ignore-missing quiet status strict tag text version warn zero
sha512sum	bctwz			binary check help ignore-missing quiet status strict tag text version warn zero
basename	az	s		help multiple suffix= version zero
dirname	z			help version zero
realpath	LPemqsz			canonicalize-existing canonicalize-missing help logical no-symlinks physical quiet relative-base= relative-to= strip version zero
readlink	efmnqsvz			canonicalize canonicalize-existing canonicalize-missing help no-newline quiet silent verbose version zero
file	0CLNSZbcdhiklnprsvz	FPefm		apple brief checking-printout compile debug dereference exclude-quiet= exclude= extension files-from= help keep-going list magic-file= mime mime-encoding mime-type no-buffer no-dereference no-pad no-sandbox parameter= preserve-date print0 raw separator= special-files uncompress uncompress-noreport version
tac	br	s		before help regex separator= version
comm	123z			check-order help nocheck-order output-delimiter= total version zero-terminated
paste	sz	d		delimiters= help serial version zero-terminated
join	iz	12aejotv		check-order header help ignore-case nocheck-order version zero-terminated
fold	bs	w		bytes help spaces version width=
fmt	cstu	gpw		crown-margin goal= help prefix= split-only tagged-paragraph uniform-spacing version width=
od	abcdfilosvx	ANSjt	w	address-radix= endian= format= help output-duplicates read-bytes= skip-bytes= strings? traditional version width?
base64	di	w		decode help ignore-garbage version wrap=
uname	aimnoprsv			all hardware-platform help kernel-name kernel-release kernel-version machine nodename operating-system processor version
whoami				help version
cp	HLPRTZabdfilnprsuvx	St		archive attributes-only backup? context? copy-contents dereference force help interactive link no-clobber no-dereference no-preserve= no-target-directory one-file-system parents preserve? recursive reflink? remove-destination sparse= strip-trailing-slashes suffix= symbolic-link target-directory= update verbose version
mv	TZbfinuv	St		backup? context force help interactive no-clobber no-target-directory strip-trailing-slashes suffix= target-directory= update verbose version
ln	FLPTbdfinrsv	St		backup? directory force help interactive logical no-dereference no-target-directory physical relative suffix= symbolic target-directory= verbose version
install	CDTZbcdpsv	Sgmot		backup? compare context? directory group= help mode= no-target-directory owner= preserve-context preserve-timestamps strip strip-program= suffix= target-directory= verbose version
tee	aip			append help ignore-interrupts output-error? version
rev	Vh			help version
expand	i	t		help initial tabs= version
unexpand	a	t		all first-only help tabs= version
seq	w	fs		equal-width format= help separator= version
sleep				help version
printenv	0			help null version
id	GZagnruz			context group groups help name real user version zero
touch	acfhm	drt		date= help no-create no-dereference reference= time= version
mkdir	Zpv	m		context? help mode= parents verbose version
`
